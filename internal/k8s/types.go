package k8s

// The few Kubernetes API fields the manifests use, with the API's own
// field names (k8s.io/api core/v1 and batch/v1). Tests decode the output
// strictly into k8s.io/api's types.

type objectMeta struct {
	Name      string            `yaml:"name,omitempty"`
	Namespace string            `yaml:"namespace,omitempty"`
	Labels    map[string]string `yaml:"labels,omitempty"`
}

type configMap struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   objectMeta        `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
}

type service struct {
	APIVersion string      `yaml:"apiVersion"`
	Kind       string      `yaml:"kind"`
	Metadata   objectMeta  `yaml:"metadata"`
	Spec       serviceSpec `yaml:"spec"`
}

type serviceSpec struct {
	ClusterIP                string            `yaml:"clusterIP"`
	Selector                 map[string]string `yaml:"selector"`
	PublishNotReadyAddresses bool              `yaml:"publishNotReadyAddresses"`
	Ports                    []servicePort     `yaml:"ports"`
}

type servicePort struct {
	Name       string `yaml:"name"`
	Port       int    `yaml:"port"`
	TargetPort int    `yaml:"targetPort"`
	Protocol   string `yaml:"protocol"`
}

type job struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
	Spec       jobSpec    `yaml:"spec"`
}

type jobSpec struct {
	CompletionMode          string            `yaml:"completionMode,omitempty"`
	Completions             *int              `yaml:"completions,omitempty"`
	Parallelism             *int              `yaml:"parallelism,omitempty"`
	BackoffLimit            *int              `yaml:"backoffLimit"`
	PodFailurePolicy        *podFailurePolicy `yaml:"podFailurePolicy,omitempty"`
	TTLSecondsAfterFinished *int              `yaml:"ttlSecondsAfterFinished,omitempty"`
	Template                podTemplate       `yaml:"template"`
}

type podFailurePolicy struct {
	Rules []podFailurePolicyRule `yaml:"rules"`
}

type podFailurePolicyRule struct {
	Action      string                     `yaml:"action"`
	OnExitCodes *podFailurePolicyExitCodes `yaml:"onExitCodes"`
}

type podFailurePolicyExitCodes struct {
	ContainerName string `yaml:"containerName"`
	Operator      string `yaml:"operator"`
	Values        []int  `yaml:"values"`
}

type podTemplate struct {
	Metadata objectMeta `yaml:"metadata"`
	Spec     podSpec    `yaml:"spec"`
}

type podSpec struct {
	RestartPolicy                 string                     `yaml:"restartPolicy"`
	ServiceAccountName            string                     `yaml:"serviceAccountName,omitempty"`
	AutomountServiceAccountToken  *bool                      `yaml:"automountServiceAccountToken,omitempty"`
	SecurityContext               *podSecurityContext        `yaml:"securityContext,omitempty"`
	Containers                    []container                `yaml:"containers"`
	Volumes                       []volume                   `yaml:"volumes"`
	TopologySpreadConstraints     []topologySpreadConstraint `yaml:"topologySpreadConstraints,omitempty"`
	Affinity                      *affinity                  `yaml:"affinity,omitempty"`
	TerminationGracePeriodSeconds *int                       `yaml:"terminationGracePeriodSeconds,omitempty"`
}

type pod struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
	Spec       podSpec    `yaml:"spec"`
}

type affinity struct {
	PodAffinity *podAffinity `yaml:"podAffinity,omitempty"`
}

type podAffinity struct {
	Required []podAffinityTerm `yaml:"requiredDuringSchedulingIgnoredDuringExecution"`
}

type podAffinityTerm struct {
	TopologyKey   string        `yaml:"topologyKey"`
	LabelSelector labelSelector `yaml:"labelSelector"`
}

type podSecurityContext struct {
	FSGroup             *int   `yaml:"fsGroup,omitempty"`
	FSGroupChangePolicy string `yaml:"fsGroupChangePolicy,omitempty"`
}

type topologySpreadConstraint struct {
	MaxSkew           int           `yaml:"maxSkew"`
	TopologyKey       string        `yaml:"topologyKey"`
	WhenUnsatisfiable string        `yaml:"whenUnsatisfiable"`
	LabelSelector     labelSelector `yaml:"labelSelector"`
}

type container struct {
	Name            string                `yaml:"name"`
	Image           string                `yaml:"image"`
	ImagePullPolicy string                `yaml:"imagePullPolicy,omitempty"`
	Command         []string              `yaml:"command,omitempty"`
	Args            []string              `yaml:"args,omitempty"`
	Ports           []containerPort       `yaml:"ports,omitempty"`
	VolumeMounts    []volumeMount         `yaml:"volumeMounts"`
	Resources       *resourceRequirements `yaml:"resources,omitempty"`
	ReadinessProbe  *probe                `yaml:"readinessProbe,omitempty"`
	SecurityContext *securityContext      `yaml:"securityContext,omitempty"`
}

type probe struct {
	TCPSocket     *tcpSocketAction `yaml:"tcpSocket,omitempty"`
	PeriodSeconds int              `yaml:"periodSeconds,omitempty"`
}

type tcpSocketAction struct {
	// Port is a container port's name.
	Port string `yaml:"port"`
}

type securityContext struct {
	RunAsNonRoot             bool          `yaml:"runAsNonRoot"`
	AllowPrivilegeEscalation bool          `yaml:"allowPrivilegeEscalation"`
	ReadOnlyRootFilesystem   bool          `yaml:"readOnlyRootFilesystem"`
	Capabilities             *capabilities `yaml:"capabilities,omitempty"`
	SeccompProfile           *seccomp      `yaml:"seccompProfile,omitempty"`
}

type capabilities struct {
	Drop []string `yaml:"drop"`
}

type seccomp struct {
	Type string `yaml:"type"`
}

type containerPort struct {
	Name          string `yaml:"name"`
	ContainerPort int    `yaml:"containerPort"`
	Protocol      string `yaml:"protocol"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	ReadOnly  bool   `yaml:"readOnly,omitempty"`
}

type resourceRequirements struct {
	Requests map[string]string `yaml:"requests,omitempty"`
	Limits   map[string]string `yaml:"limits,omitempty"`
}

type volume struct {
	Name                  string           `yaml:"name"`
	ConfigMap             *configMapVolume `yaml:"configMap,omitempty"`
	Secret                *secretVolume    `yaml:"secret,omitempty"`
	EmptyDir              *struct{}        `yaml:"emptyDir,omitempty"`
	PersistentVolumeClaim *claimVolume     `yaml:"persistentVolumeClaim,omitempty"`
}

type configMapVolume struct {
	Name string `yaml:"name"`
}

type secretVolume struct {
	SecretName string      `yaml:"secretName"`
	Items      []keyToPath `yaml:"items,omitempty"`
}

type keyToPath struct {
	Key  string `yaml:"key"`
	Path string `yaml:"path"`
}

type claimVolume struct {
	ClaimName string `yaml:"claimName"`
	ReadOnly  bool   `yaml:"readOnly,omitempty"`
}

type labelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

// RBAC: the coordinator reads its agents' pods (rbac.authorization.k8s.io/v1).

type serviceAccount struct {
	APIVersion                   string     `yaml:"apiVersion"`
	Kind                         string     `yaml:"kind"`
	Metadata                     objectMeta `yaml:"metadata"`
	AutomountServiceAccountToken *bool      `yaml:"automountServiceAccountToken,omitempty"`
}

type role struct {
	APIVersion string       `yaml:"apiVersion"`
	Kind       string       `yaml:"kind"`
	Metadata   objectMeta   `yaml:"metadata"`
	Rules      []policyRule `yaml:"rules"`
}

type policyRule struct {
	APIGroups []string `yaml:"apiGroups"`
	Resources []string `yaml:"resources"`
	Verbs     []string `yaml:"verbs"`
}

type roleBinding struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
	RoleRef    roleRef    `yaml:"roleRef"`
	Subjects   []subject  `yaml:"subjects"`
}

type roleRef struct {
	APIGroup string `yaml:"apiGroup"`
	Kind     string `yaml:"kind"`
	Name     string `yaml:"name"`
}

type subject struct {
	Kind      string `yaml:"kind"`
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace,omitempty"`
}
