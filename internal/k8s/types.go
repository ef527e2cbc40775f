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
	CompletionMode          string      `yaml:"completionMode,omitempty"`
	Completions             *int        `yaml:"completions,omitempty"`
	Parallelism             *int        `yaml:"parallelism,omitempty"`
	BackoffLimit            *int        `yaml:"backoffLimit"`
	TTLSecondsAfterFinished *int        `yaml:"ttlSecondsAfterFinished,omitempty"`
	Template                podTemplate `yaml:"template"`
}

type podTemplate struct {
	Metadata objectMeta `yaml:"metadata"`
	Spec     podSpec    `yaml:"spec"`
}

type podSpec struct {
	RestartPolicy string      `yaml:"restartPolicy"`
	Containers    []container `yaml:"containers"`
	Volumes       []volume    `yaml:"volumes"`
	Affinity      *affinity   `yaml:"affinity,omitempty"`
}

type container struct {
	Name            string                `yaml:"name"`
	Image           string                `yaml:"image"`
	ImagePullPolicy string                `yaml:"imagePullPolicy,omitempty"`
	Args            []string              `yaml:"args"`
	Ports           []containerPort       `yaml:"ports,omitempty"`
	VolumeMounts    []volumeMount         `yaml:"volumeMounts"`
	Resources       *resourceRequirements `yaml:"resources,omitempty"`
	SecurityContext *securityContext      `yaml:"securityContext,omitempty"`
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
}

type affinity struct {
	PodAntiAffinity *podAntiAffinity `yaml:"podAntiAffinity,omitempty"`
}

type podAntiAffinity struct {
	Preferred []weightedPodAffinityTerm `yaml:"preferredDuringSchedulingIgnoredDuringExecution"`
}

type weightedPodAffinityTerm struct {
	Weight          int             `yaml:"weight"`
	PodAffinityTerm podAffinityTerm `yaml:"podAffinityTerm"`
}

type podAffinityTerm struct {
	TopologyKey   string        `yaml:"topologyKey"`
	LabelSelector labelSelector `yaml:"labelSelector"`
}

type labelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}
