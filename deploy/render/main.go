// render-chart: the template rendering of `helm template`, for checking the
// chart on machines without Helm (docs/deployment.md). Go's text/template with
// Sprig, as Helm uses them, plus Helm's own include, tpl, required, toYaml,
// fromYaml and lookup (always empty: there is no cluster). Values are the
// chart's values.yaml merged with each -f file in turn; the output is every
// non-empty rendered template as a YAML document, as `helm template` prints it.
//
// It is not Helm: no hooks ordering, no subcharts, no --set, no schema
// validation (the tests validate values.schema.json themselves).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	yaml "gopkg.in/yaml.v2"
)

type valueFiles []string

func (v *valueFiles) String() string     { return strings.Join(*v, ",") }
func (v *valueFiles) Set(s string) error { *v = append(*v, s); return nil }

type apiVersions []string

func (a apiVersions) Has(version string) bool {
	for _, v := range a {
		if v == version {
			return true
		}
	}
	return false
}

func main() {
	var files valueFiles
	var apis valueFiles
	name := flag.String("name", "strata", "release name")
	namespace := flag.String("namespace", "default", "release namespace")
	flag.Var(&files, "f", "values file (repeatable; later files win)")
	flag.Var(&apis, "api-versions", "API versions the cluster has (repeatable)")
	flag.Parse()
	if flag.NArg() != 1 {
		fail("usage: render-chart [-name N] [-namespace NS] [-f values.yaml]... CHART_DIR")
	}
	chartDir := flag.Arg(0)
	out, err := render(chartDir, *name, *namespace, files, apis)
	if err != nil {
		fail(err.Error())
	}
	os.Stdout.WriteString(out)
}

func fail(message string) {
	fmt.Fprintln(os.Stderr, "Error: "+message)
	os.Exit(1)
}

func render(chartDir, name, namespace string, files []string, apis []string) (string, error) {
	chart, err := readYaml(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		return "", err
	}
	values, err := readYaml(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		return "", err
	}
	for _, f := range files {
		override, err := readYaml(f)
		if err != nil {
			return "", err
		}
		values = merge(values, override)
	}
	chartName, _ := chart["name"].(string)
	paths, err := filepath.Glob(filepath.Join(chartDir, "templates", "*"))
	if err != nil {
		return "", err
	}
	sort.Strings(paths)
	root := template.New("chart").Option("missingkey=zero")
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	funcs["include"] = func(string, interface{}) (string, error) { return "", nil }
	funcs["tpl"] = func(string, interface{}) (string, error) { return "", nil }
	funcs["required"] = func(message string, value interface{}) (interface{}, error) {
		if value == nil {
			return nil, fmt.Errorf("%s", message)
		}
		if s, ok := value.(string); ok && s == "" {
			return nil, fmt.Errorf("%s", message)
		}
		return value, nil
	}
	funcs["toYaml"] = func(value interface{}) string {
		data, err := yaml.Marshal(value)
		if err != nil {
			return ""
		}
		return strings.TrimSuffix(string(data), "\n")
	}
	funcs["fromYaml"] = func(text string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(text), &m); err != nil {
			m["Error"] = err.Error()
		}
		return normalise(m).(map[string]interface{})
	}
	funcs["lookup"] = func(...string) map[string]interface{} { return map[string]interface{}{} }
	root.Funcs(funcs)
	funcs["include"] = func(templateName string, data interface{}) (string, error) {
		var buf bytes.Buffer
		err := root.ExecuteTemplate(&buf, templateName, data)
		return buf.String(), err
	}
	funcs["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", err
		}
		t, err = t.New("tpl").Parse(text)
		if err != nil {
			return "", err
		}
		var buf bytes.Buffer
		err = t.Execute(&buf, data)
		return buf.String(), err
	}
	root.Funcs(funcs)
	var names []string
	for _, p := range paths {
		text, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		templateName := chartName + "/templates/" + filepath.Base(p)
		if _, err := root.New(templateName).Parse(string(text)); err != nil {
			return "", err
		}
		if !strings.HasPrefix(filepath.Base(p), "_") && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			names = append(names, templateName)
		}
	}
	data := map[string]interface{}{
		"Values": values,
		"Release": map[string]interface{}{
			"Name": name, "Namespace": namespace, "Service": "Helm", "IsInstall": true, "IsUpgrade": false, "Revision": 1,
		},
		"Chart": map[string]interface{}{
			"Name": chartName, "Version": chart["version"], "AppVersion": chart["appVersion"],
		},
		"Capabilities": map[string]interface{}{
			"KubeVersion": map[string]interface{}{"Version": "v1.31.0", "Major": "1", "Minor": "31"},
			"APIVersions": apiVersions(apis),
		},
	}
	var out strings.Builder
	for _, templateName := range names {
		data["Template"] = map[string]interface{}{"Name": templateName, "BasePath": chartName + "/templates"}
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, templateName, data); err != nil {
			return "", err
		}
		text := strings.ReplaceAll(buf.String(), "<no value>", "")
		for _, doc := range strings.Split(text, "\n---") {
			if strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" {
				continue
			}
			out.WriteString("---\n# Source: " + templateName + "\n")
			out.WriteString(strings.TrimLeft(strings.TrimPrefix(doc, "---"), "\n"))
			out.WriteString("\n")
		}
	}
	return out.String(), nil
}

func readYaml(path string) (map[string]interface{}, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]interface{}{}
	if err := yaml.Unmarshal(text, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return normalise(m).(map[string]interface{}), nil
}

// normalise turns yaml.v2's map[interface{}]interface{} into map[string]interface{}, and every
// number into a float64, as Helm's values are (it reads them through JSON).
func normalise(v interface{}) interface{} {
	switch t := v.(type) {
	case int:
		return float64(t)
	case int64:
		return float64(t)
	case uint64:
		return float64(t)
	case map[interface{}]interface{}:
		m := map[string]interface{}{}
		for k, item := range t {
			m[fmt.Sprint(k)] = normalise(item)
		}
		return m
	case map[string]interface{}:
		for k, item := range t {
			t[k] = normalise(item)
		}
		return t
	case []interface{}:
		for i, item := range t {
			t[i] = normalise(item)
		}
		return t
	}
	return v
}

// merge puts override over base, maps merged key by key, as Helm coalesces values files.
func merge(base, override map[string]interface{}) map[string]interface{} {
	for k, v := range override {
		if bm, ok := base[k].(map[string]interface{}); ok {
			if om, ok := v.(map[string]interface{}); ok {
				base[k] = merge(bm, om)
				continue
			}
		}
		if v == nil {
			delete(base, k)
			continue
		}
		base[k] = v
	}
	return base
}
