// Command yaml-corpus writes the error texts sigs.k8s.io/yaml v1.6.0's YAMLToJSON (what the
// apiserver decodes a YAML body with) returns for a corpus of malformed manifests, one JSON line
// per refused body, to src/endpoints/testdata/go-yaml-errors.jsonl (the test of
// src/endpoints/yaml_error.rs reads it). Run: cd scripts/yaml-corpus && go run .
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

const deployHead = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    app: web\n"

var cases = []string{
	// --- indentation mistakes at various depths ---
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n   namespace: default\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n namespace: default\n",
	"apiVersion: v1\n kind: ConfigMap\nmetadata:\n  name: cfg\n",
	" apiVersion: v1\nkind: ConfigMap\n",
	deployHead + "spec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n         ports:\n        - containerPort: 80\n",
	deployHead + "spec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n       imagePullPolicy: Always\n",
	deployHead + "spec:\n  selector:\n    matchLabels:\n      app: web\n   template:\n    metadata: {}\n",
	deployHead + "spec:\n  template:\n    spec:\n      containers:\n        - name: a\n          image: x\n      - name: b\n        image: y\n",
	deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: a\n        env:\n        - name: FOO\n          value: bar\n         - name: BAZ\n          value: qux\n",
	deployHead + "spec:\n  template:\n    spec:\n      containers:\n      - name: a\n        resources:\n          limits:\n            cpu: 100m\n           memory: 128Mi\n",
	"apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  ports:\n  - port: 80\n    targetPort: 8080\n   protocol: TCP\n",
	"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: busybox\n    command:\n    - sh\n     - -c\n",
	// --- tabs in different positions ---
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: cfg\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n\tnamespace: default\n",
	"apiVersion: v1\nkind: ConfigMap\ndata:\n  key:\tvalue\n",
	"apiVersion: v1\nkind: ConfigMap\ndata:\n  \tkey: value\n",
	"\tapiVersion: v1\nkind: Pod\n",
	"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  -\tname: c\n    image: x\n",
	"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n\t- name: c\n",
	"apiVersion: v1\nkind: ConfigMap\ndata:\n  script: |\n\techo hi\n",
	"key: value\t\n\t\nother: x\n",
	// --- unclosed quotes ---
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"cfg\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 'cfg\n",
	"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: \"hello\n  b: world\n",
	"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: 'it's broken'\n",
	"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: \"say \"hi\" now\"\n",
	"metadata:\n  name: \"web\"-svc\n",
	"metadata:\n  labels: {app: \"web}\n",
	"args: [\"--port=80\", \"--host]\n",
	// --- unclosed brackets / braces ---
	"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: c\n    args: [\"a\", \"b\"\n",
	"apiVersion: v1\nkind: Pod\nmetadata:\n  labels: {app: web, tier: fe\n",
	"metadata: {name: x, labels: {app: y}\n",
	"args: [a, [b, c]\n",
	"args: [a, b]]\n",
	"labels: {app: web}}\n",
	"args: [a, b}\n",
	"labels: {app: web]\n",
	"{\n",
	"]\n",
	"[\n",
	"}\n",
	"{a: 1, b: [1, 2, 3}\n",
	"spec:\n  ports: [{port: 80, targetPort: 8080]\n",
	// --- trailing garbage after flow collection ---
	"args: [a, b] c\n",
	"labels: {app: web} extra\n",
	"[a, b] c\n",
	"{a: 1} {b: 2}\n",
	"labels: {app: web}, tier: fe\n",
	"\"quoted\" trailing\n",
	"name: 'web' -svc\n",
	// --- stray colons ---
	"metadata:\n  name: web: svc\n",
	"image: nginx:1.19: latest\n",
	"apiVersion: v1\nkind: Pod\n: orphan\n",
	"key:: value\n",
	"a: b: c: d\n",
	"metadata:\n  name: web\n  :\n",
	"url: http://example.com: 8080\n",
	// --- duplicate-looking keys ---
	"apiVersion: v1\nkind: ConfigMap\nkind: Secret\n",
	"metadata:\n  name: a\n  name: b\n",
	"data:\n  key: 1\n  \"key\": 2\n",
	"data:\n  1: a\n  \"1\": b\n",
	"data:\n  true: a\n  \"true\": b\n",
	// --- anchors/aliases ---
	"metadata:\n  labels: *undefined\n",
	"a: &anchor\nb: *anchor\nc: *nope\n",
	"a: & x\n",
	"a: * \n",
	"a: &a1 &a2 value\n",
	"a: *alias extra\n",
	"a: &x [*x]\n",
	"base: &b\n  x: 1\nderived:\n  <<: *b\n  <<: *missing\n",
	"? *unknown\n: value\n",
	// --- invalid escapes ---
	"data:\n  path: \"C:\\Users\\me\"\n",
	"data:\n  re: \"\\d+\\.\\d+\"\n",
	"data:\n  x: \"\\q\"\n",
	"data:\n  x: \"\\xZZ\"\n",
	"data:\n  x: \"\\uD83\"\n",
	"data:\n  x: \"\\U0011FFFF\"\n",
	"data:\n  x: \"trailing backslash\\\n",
	// --- '@' and '`' starting tokens ---
	"metadata:\n  annotations:\n    owner: @team\n",
	"@type: something\n",
	"cmd: `date`\n",
	"`key`: value\n",
	"args:\n- @file.txt\n",
	"args: [@x]\n",
	// --- '- ' list item at the wrong indent / mixing seq & map ---
	"spec:\n  containers:\n  - name: a\n - name: b\n",
	"spec:\n  containers:\n    - name: a\n  - name: b\n",
	"kind: Pod\n- name: x\n",
	"- a\n- b\nkey: value\n",
	"key: value\n- item\n",
	"spec:\n  containers:\n  - name: a\n  image: nginx\n  ports: []\n  - name: b\n",
	"items:\n  - a\n  b: c\n",
	"- name: a\n  - name: b\n",
	"- - - a\n  - b\n -c\n",
	"env:\n- name: A\n  value: 1\n-name: B\n  value: 2\n",
	// --- multi-line strings with bad indentation ---
	"data:\n  msg: this is a\nlong string\n",
	"data:\n  msg: \"multi\nline\"\n",
	"data:\n  msg: 'multi\nline'\n",
	"data:\n  msg: first\n    continuation\n  other: x\n  more:\n   bad\n  x: y\n",
	// --- block scalars with bad indentation ---
	"data:\n  script: |\n    line1\n  line2\n",
	"data:\n  script: |\n      line1\n    line2\n    other: x\n",
	"data:\n  script: >\n    folded\n   bad\n",
	"data:\n  script: |2\n   three spaces\n  two\n x\n",
	"data:\n  script: |0\n  x\n",
	"data:\n  script: |10\n  x\n",
	"data:\n  script: |-+\n  x\n",
	"data:\n  script: | trailing text\n  x\n",
	"data:\n  script: >\n\n    text\n  key: v\n   bad\n",
	"data:\n  script: |\n    ok\n  next: |\n  bad\n",
	// --- documents with --- and ... ---
	"apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\n  kind: Secret\n",
	"--- apiVersion: v1\nkind: ConfigMap\n",
	"---\n- a\n...\nkey: [\n",
	"apiVersion: v1\n...\nkind: x\n---\n: bad\n",
	"---\n---\n\"unterminated\n",
	"key: value\n--- \n  - indented\n bad\n",
	// --- comments in odd places ---
	"metadata:\n  name: web#comment\n  labels: {app: web #c\n}\n",
	"args: [a, # comment\n  b\n",
	"key: \"value\" # ok\n  # indented comment\n    bad: x\n",
	"key: value #comment\n #\n  sub: x\n",
	"# comment\n  - a\n b: c\n",
	"data: {a: 1 #x, b: 2}\n",
	// --- CRLF line endings ---
	"apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: cfg\r\n   namespace: x\r\n",
	"apiVersion: v1\r\nkind: ConfigMap\r\ndata:\r\n  a: \"unterminated\r\n",
	"apiVersion: v1\r\nkind: Pod\r\nspec:\r\n\tcontainers: []\r\n",
	"a: b\rc: d: e\n",
	// --- BOM ---
	"\ufeffapiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n   bad: y\n",
	"apiVersion: v1\n\ufeffkind: ConfigMap\n",
	"\ufeff\ufeffapiVersion: v1\n",
	"data:\n  a: \ufeff[x\n",
	// --- keys with '? ' ---
	"? complex key\n: value\n? another\n  : bad\n",
	"? [a, b]\n: value\n",
	"? {a: b}\n: value\n",
	"?\n- a\n: b\n",
	"? a\n? b\n: c\n  d\n",
	// --- unicode ---
	"metadata:\n  name: café\n   labels: {}\n",
	"data:\n  emoji: 🚀: launch\n",
	"data:\n  \"ключ\": [значение\n",
	"名前: \"値\n",
	"data:\n  x: \u2028\n  y: \"\u2029\n",
	// --- control characters ---
	"data:\n  x: a\x00b\n",
	"data:\n  x: a\x07b\n",
	"\x00",
	"apiVersion: v1\x01\n",
	"data:\n  x: \"a\x1bb\"\n",
	"data:\n  x: \x7f\n",
	"data:\n  x: \x85y\n",
	"data:\n  \x0bkey: v\n",
	"data:\n  x: \"\xff\xfe\"\n",
	"key: \xc3\x28\n",
	// --- % directives ---
	"%YAML 1.1\napiVersion: v1\n",
	"%YAML 1.2\n---\nkey: value\n",
	"%YAML 2.0\n---\nkey: value\n",
	"%YAML 1.1\n%YAML 1.1\n---\nkey: value\n",
	"%TAG ! tag:example.com,2000:\n%TAG ! tag:other.com,2000:\n---\nkey: value\n",
	"%FOO bar\n---\nkey: value\n",
	"%YAML\n---\nkey: value\n",
	"%TAG !e!\n---\na: 1\n",
	"key: value\n%YAML 1.1\n",
	// --- tags ---
	"spec:\n  replicas: !!int three\n",
	"spec:\n  replicas: !!float abc\n",
	"spec:\n  paused: !!bool maybe\n",
	"data:\n  bin: !!binary \"not base64!!\"\n",
	"data:\n  bin: !!binary |\n    ###\n",
	"data:\n  t: !!timestamp yesterday\n",
	"data:\n  n: !!null something\n",
	"data: !!map [a, b]\n",
	"data: !!seq {a: b}\n",
	"data: !!str {a: b}\n",
	"data: !!int [1]\n",
	"data: !<tag:yaml.org,2002:int> nope\n",
	"data: !unknown!tag value\n",
	"data: !e!foo value\n",
	"data: !! value\n",
	"data: !<unterminated value\n",
	"data: !!merge x\n",
	// --- merge keys with non-map ---
	"base: &b [1, 2]\nderived:\n  <<: *b\n",
	"derived:\n  <<: scalar\n",
	"derived:\n  <<: [1, 2]\n",
	"a: &a {x: 1}\nderived:\n  <<: [*a, notamap]\n",
	"derived:\n  <<: [[1]]\n",
	"derived:\n  <<: 5\n",
	// --- very long lines ---
	"data:\n  long: \"" + strings.Repeat("x", 5000) + "\n",
	"data:\n  long: [" + strings.Repeat("a, ", 3000) + "\n",
	"data:\n  " + strings.Repeat("k", 2000) + ": v\n",
	"data:\n  " + strings.Repeat("k", 2000) + "\n  x: y\n",
	// --- resource limits / abuse ---
	"a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n",
	strings.Repeat("[", 10001),
	"metadata:\n  labels: " + strings.Repeat("{", 10001),
	strings.Repeat("- ", 10001),
	// --- more directive / tag / scanner edge cases ---
	"%YAML 1\n---\na: 1\n",
	"%YAML 1.1234567890\n---\na: 1\n",
	"%TAG e! tag:x,2000:\n---\na: 1\n",
	"% YAML 1.1\n---\na: 1\n",
	"%YAML 1.1 extra\n---\na: 1\n",
	"a: !<tag:%ZZ> b\n",
	"a: !e!\n",
	"data:\n  x: \"line1\n---\nline2\"\n",
	"data:\n  x: 'line1\n...\n'\n",
	"data:\n  script: |x\n    a\n",
	"data:\n  script: |1-2\n    a\n",
	"data:\n  x: \"\\u00\"\n",
	"data:\n  x: \"\\uDC00\"\n",
	"a: \xe2\x82\n",
	"a: \xf8\x88\x80\x80\x80\n",
	"\xff\xfea\x00:\x00 \x00b\x00\n\x00",
	"a: &\n",
	"a: *\n",
	"a: &anc!hor b\n",
	"&a\n",
	"? a\n: b\n: c\n",
	"spec:\n  containers:\n  - name: web\n    image: nginx\n    ports:\n    - containerPort: 80\n      protocol: TCP\n    - containerPort: 443\n    protocol: TCP\n",
	"apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    metadata:\n      annotations:\n        prometheus.io/scrape: \"true\n        prometheus.io/port: \"9090\"\n",
	"apiVersion: v1\nkind: Secret\ntype: Opaque\ndata:\n  password: !!binary cGFzc3dvcmQ=!!\n",
	"apiVersion: v1\nkind: ConfigMap\ndata:\n  nginx.conf: |\n    server {\n      listen 80;\n  }\n",
	"apiVersion: v1\nkind: ConfigMap\ndata:\n  app.json: {\"a\": 1, \"b\": [1, 2}\n",
	"apiVersion: v1\nkind: ConfigMap\ndata:\n  cron: */5 * * * *\n",
	"apiVersion: v1\nkind: ConfigMap\ndata:\n  value: %PATH%\n",
	"apiVersion: v1\nkind: ConfigMap\ndata:\n  value: |invalid\n",
	"apiVersion: v1\nkind: Pod\nspec:\n  nodeSelector:\n    kubernetes.io/os: linux\n  tolerations:\n  - key: \"node-role\"\n    operator: \"Exists\"\n    effect: \"NoSchedule\"\n  - key: \"x\" operator: \"Equal\"\n",
	"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: c\n    image: nginx\n    command: [\"sh\", \"-c\", \"echo \\\"hi\"]\n    args: [\"unterminated]\n",
	"apiVersion: networking.k8s.io/v1\nkind: Ingress\nspec:\n  rules:\n  - host: *.example.com\n",
	"apiVersion: v1\nkind: Service\nspec:\n  ports:\n  - port: 80\n    name: http\n  - port: 443,\n    name: https\n  selector:\n  app: web\n  - x\n",
	// --- valid-but-tricky: parse ok in YAML, but YAMLToJSON may fail ---
	"data:\n  [a, b]: value\n",
	"data:\n  {a: b}: value\n",
	"1: one\n2: two\n",
	"true: yes\nfalse: no\n",
	"1.5: x\n",
	"~: nullkey\n",
	"null: nullkey\n",
	"a: .inf\nb: -.inf\nc: .nan\n",
	"a: 0x1F\nb: 0o17\nc: 1_000\n",
	"a: 2001-12-14t21:59:43.10-05:00\n",
	"? - a\n  - b\n: c\n",
	"a: &x\n  b: *x\n",
	"- &a [*a]\n",
	"a: !!binary aGVsbG8=\n",
	"a: 123456789012345678901234567890\n",
	"a: 1e400\n",
	"? !!binary aGVsbG8=\n: v\n",
	"? 2001-12-14\n: v\n",
	"a: !!float 1\n",
	"?\n: empty key\n",
	"[1, 2]: x\n",
	"{a: 1}: x\n",
	"x: {[1]: 2}\n",
	"- {? [a]: b}\n",
	"a: b\n---\nc: d\n",
	"",
	"---\n...\n",
}

const out = "../../src/endpoints/testdata/go-yaml-errors.jsonl"

func main() {
	f, err := os.Create(out)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	n, ok := 0, 0
	seenBody := map[string]bool{}
	for i, body := range cases {
		if seenBody[body] {
			fmt.Fprintf(os.Stderr, "duplicate body at %d\n", i)
			continue
		}
		seenBody[body] = true
		_, err := func() (out []byte, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("PANIC: %v", r)
				}
			}()
			return yaml.YAMLToJSON([]byte(body))
		}()
		if err == nil {
			ok++
			if os.Getenv("SHOWOK") != "" {
				fmt.Fprintf(os.Stderr, "OK %d: %q\n", i, trunc(body))
			}
			continue
		}
		n++
		rec := map[string]string{"body": body, "error": err.Error()}
		if !utf8.ValidString(body) {
			// JSON strings cannot carry invalid UTF-8 (encoding/json substitutes U+FFFD),
			// so keep the exact bytes alongside.
			rec["body_base64"] = base64.StdEncoding.EncodeToString([]byte(body))
		}
		if !utf8.ValidString(err.Error()) {
			fmt.Fprintf(os.Stderr, "invalid utf8 in error for case %d\n", i)
		}
		if err := enc.Encode(rec); err != nil {
			panic(err)
		}
	}
	fmt.Printf("total=%d errors=%d no-error=%d\n", len(cases), n, ok)
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
