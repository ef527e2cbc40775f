package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/result"
)

// The HTML report rendered in a real browser: Debian's chromium, headless.
// The browser lays the page out with its own fonts, and a script added to
// the test's copy of each page (the report itself carries none) measures
// what it drew: every text inside its chart, no legend over a plot area,
// no two point labels overlapping, every labelled point labelled. Where
// no chromium is installed the test skips with one line; `make
// screenshots` runs it over the showcase scenarios' reports and writes
// their screenshots to docs/screenshots.
//
// PERFSCEN_CHROMIUM names the browser binary; PERFSCEN_SCREENSHOT_HTML
// (comma-separated report files) and PERFSCEN_SCREENSHOTS (a directory)
// render those reports and write one PNG per report.

func chromiumBinary() string {
	if b := os.Getenv("PERFSCEN_CHROMIUM"); b != "" {
		return b
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browse runs the browser headless on page with extra arguments and
// returns what it printed.
func browse(t *testing.T, bin, page string, height int, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	profile := t.TempDir()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--hide-scrollbars", "--force-device-scale-factor=1", "--user-data-dir=" + profile,
		fmt.Sprintf("--window-size=1400,%d", height)}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s on %s: %v\n%s", bin, page, err, errb.String())
	}
	return out.Bytes()
}

// layoutScript measures the charts as the browser drew them and writes
// one line per problem into <pre id="layout">, "ok" when there is none.
const layoutScript = `<script>
(function () {
  var out = [];
  function inside(a, b) { return a.left >= b.left - 1 && a.right <= b.right + 1 && a.top >= b.top - 1 && a.bottom <= b.bottom + 1; }
  function meet(a, b) { return a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5; }
  var svgs = document.querySelectorAll("svg");
  svgs.forEach(function (s, i) {
    var name = "chart " + (i + 1) + " (" + (s.getAttribute("aria-label") || "") + ")";
    var box = s.getBoundingClientRect();
    s.querySelectorAll("text").forEach(function (t) {
      if (t.textContent && !inside(t.getBoundingClientRect(), box)) out.push(name + ": text '" + t.textContent + "' leaves the chart");
    });
    var plots = Array.from(s.querySelectorAll("rect.plot-area")).map(function (r) { return r.getBoundingClientRect(); });
    s.querySelectorAll("rect.legend-box").forEach(function (l) {
      plots.forEach(function (p) { if (meet(l.getBoundingClientRect(), p)) out.push(name + ": the legend covers a plot area"); });
    });
    var labels = Array.from(s.querySelectorAll("text.point-label")).map(function (t) { return [t.textContent, t.getBoundingClientRect()]; });
    for (var a = 0; a < labels.length; a++) for (var b = 0; b < a; b++)
      if (meet(labels[a][1], labels[b][1])) out.push(name + ": point labels '" + labels[a][0] + "' and '" + labels[b][0] + "' overlap");
    s.querySelectorAll("g.point").forEach(function (g) {
      var want = g.getAttribute("data-label"), t = g.querySelector("text.point-label");
      if (want && (!t || t.textContent !== want)) out.push(name + ": point " + want + " is not labelled");
    });
  });
  var pre = document.createElement("pre");
  pre.id = "layout";
  pre.textContent = svgs.length + " charts\n" + (out.length ? out.join("\n") : "ok");
  document.body.appendChild(pre);
})();
</script>`

// brokenSVG has every fault the probe looks for.
const brokenSVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 100" width="200" height="100" aria-label="broken">
<rect x="20" y="10" width="150" height="70" class="plot-area" fill="none" stroke="black"/>
<rect x="150" y="10" width="40" height="20" class="legend-box" fill="none" stroke="black"/>
<text x="195" y="95" font-size="11" text-anchor="middle">4000</text>
<g class="point" data-label="c=1"><circle cx="50" cy="50" r="4"/></g>
<g class="point" data-label="c=2"><circle cx="60" cy="50" r="4"/><text x="64" y="46" font-size="11" class="point-label">c=2</text></g>
<g class="point" data-label="c=4"><circle cx="62" cy="52" r="4"/><text x="65" y="47" font-size="11" class="point-label">c=4</text></g>
</svg>`

var layoutResult = regexp.MustCompile(`(?s)<pre id="layout">(.*?)</pre>`)

func TestHTMLInBrowser(t *testing.T) {
	bin := chromiumBinary()
	if bin == "" && os.Getenv("PERFSCEN_SCREENSHOTS") != "" {
		t.Fatal("make screenshots needs a browser: apt-get install chromium (or set PERFSCEN_CHROMIUM)")
	}
	if bin == "" {
		fmt.Fprintln(os.Stderr, "SKIP TestHTMLInBrowser: no chromium installed, the HTML report was not rendered in a browser (apt-get install chromium, or make screenshots)")
		t.Skip("no chromium installed: the HTML report was not rendered in a browser (apt-get install chromium, or make screenshots)")
	}
	dir := t.TempDir()
	pages := map[string]string{}
	fixRun, fixV := fixture(t)
	for name, c := range map[string]struct {
		run *result.Run
		v   *verdict.Verdict
	}{"fixture": {fixRun, fixV}, "sweep": {sweepRun(), nil}, "llm-sweep": {llmSweepRun(), nil}} {
		var b bytes.Buffer
		if err := HTML(&b, c.run, c.v, Options{}); err != nil {
			t.Fatal(err)
		}
		pages[name] = b.String()
	}
	pages["broken"] = "<!DOCTYPE html><html><body>" + brokenSVG + "</body></html>"
	var shots []string
	if list := os.Getenv("PERFSCEN_SCREENSHOT_HTML"); list != "" {
		for _, p := range strings.Split(list, ",") {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			name := strings.TrimSuffix(filepath.Base(p), ".html")
			pages[name] = string(b)
			shots = append(shots, name)
		}
	}
	names := make([]string, 0, len(pages))
	for n := range pages {
		names = append(names, n)
	}
	sort.Strings(names)
	// One browser start for every page: their bodies in one document
	// under the report's own head, then the probe.
	head, _, _ := strings.Cut(pages["fixture"], "<body>")
	var probe strings.Builder
	probe.WriteString(head + "<body>\n")
	for _, name := range names {
		_, body, _ := strings.Cut(pages[name], "<body>")
		body, _, _ = strings.Cut(body, "</body>")
		probe.WriteString(body)
	}
	probe.WriteString(layoutScript + "\n</body>\n</html>\n")
	probeFile := filepath.Join(dir, "probe.html")
	if err := os.WriteFile(probeFile, []byte(probe.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := browse(t, bin, probeFile, 3000, "--dump-dom")
	m := layoutResult.FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the layout probe left no result:\n%.2000s", dom)
	}
	lines := strings.Split(strings.TrimSpace(string(m[1])), "\n")
	t.Logf("the browser drew %s", lines[0])
	var broken []string
	for _, l := range lines[1:] {
		if strings.Contains(l, "(broken)") {
			broken = append(broken, l)
		} else if l != "ok" {
			t.Errorf("as the browser drew it: %s", l)
		}
	}
	// The probe itself: a chart drawn wrong must be reported.
	for _, want := range []string{"text '4000' leaves the chart", "the legend covers a plot area", "point c=1 is not labelled", "'c=4' and 'c=2' overlap"} {
		if !strings.Contains(strings.Join(broken, "\n"), want) {
			t.Errorf("the layout probe missed %q in a broken chart:\n%s", want, strings.Join(broken, "\n"))
		}
	}
	// One screenshot at least, so a page that lays out but paints nothing
	// is caught too.
	if len(shots) == 0 {
		shots = []string{"fixture"}
	}
	outDir := os.Getenv("PERFSCEN_SCREENSHOTS")
	for _, name := range shots {
		src := filepath.Join(dir, name+".html")
		if err := os.WriteFile(src, []byte(pages[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		raw := filepath.Join(dir, name+".raw.png")
		height := 2000
		if outDir != "" {
			height = 9000 // the whole page, cropped below
		}
		browse(t, bin, src, height, "--screenshot="+raw)
		img, err := readPNG(raw)
		if err != nil {
			t.Fatal(err)
		}
		img = cropBlank(img)
		if img.Bounds().Dy() < 200 {
			t.Errorf("%s: the screenshot is blank", name)
		}
		if outDir != "" {
			if err := writePalettedPNG(filepath.Join(outDir, name+".png"), img); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func readPNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return png.Decode(f)
}

// cropBlank cuts the white below the page's last painted row.
func cropBlank(img image.Image) image.Image {
	b := img.Bounds()
	last := b.Min.Y
	for y := b.Max.Y - 1; y >= b.Min.Y && last == b.Min.Y; y-- {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				last = y
				break
			}
		}
	}
	rect := image.Rect(b.Min.X, b.Min.Y, b.Max.X, min(b.Max.Y, last+32))
	out := image.NewRGBA(rect)
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		for x := rect.Min.X; x < rect.Max.X; x++ {
			out.Set(x, y, img.At(x, y))
		}
	}
	return out
}

// writePalettedPNG writes img with 256 colours: a report is mostly white,
// text and a few chart colours, and a paletted file is a fraction of the
// browser's RGBA one. The palette is picked greedily from a 5-bit
// histogram, each pick the colour that weighs most by the square root of
// its pixels times its squared distance from the colours picked so far
// (the root keeps the many pixels of near-white from outweighing colour):
// a small legend
// swatch of a colour of its own gets its colour, not the nearest grey of
// the text's anti-aliasing.
func writePalettedPNG(path string, img image.Image) error {
	b := img.Bounds()
	type bin struct {
		r, g, b, n float64
		d          float64 // squared distance to the nearest picked colour
	}
	bins := map[uint16]*bin{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			k := uint16(c.R>>3)<<10 | uint16(c.G>>3)<<5 | uint16(c.B>>3)
			e := bins[k]
			if e == nil {
				e = &bin{d: math.Inf(1)}
				bins[k] = e
			}
			e.r, e.g, e.b, e.n = e.r+float64(c.R), e.g+float64(c.G), e.b+float64(c.B), e.n+1
		}
	}
	keys := make([]uint16, 0, len(bins))
	for k := range bins {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	pal := make(color.Palette, 0, 256)
	for len(pal) < 256 && len(pal) < len(keys) {
		var best *bin
		bestW := -1.0
		for _, k := range keys {
			e := bins[k]
			w := math.Sqrt(e.n) * math.Min(e.d, 1e9)
			if w > bestW {
				best, bestW = e, w
			}
		}
		c := color.RGBA{uint8(best.r / best.n), uint8(best.g / best.n), uint8(best.b / best.n), 0xff}
		pal = append(pal, c)
		for _, k := range keys {
			e := bins[k]
			dr, dg, db := e.r/e.n-float64(c.R), e.g/e.n-float64(c.G), e.b/e.n-float64(c.B)
			e.d = math.Min(e.d, dr*dr+dg*dg+db*db)
		}
	}
	out := image.NewPaletted(b, pal)
	near := map[color.RGBA]uint8{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			i, ok := near[c]
			if !ok {
				i = uint8(pal.Index(c))
				near[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(f, out); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
