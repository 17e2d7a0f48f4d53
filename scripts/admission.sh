#!/usr/bin/env bash
# An admission webhook written in Python, run beside `kubefake serve`, guarding ConfigMaps: the
# webhook is named by Service and mapped to its loopback port with --webhook-service, its
# certificate is signed by a CA given as the configuration's caBundle, and kubectl shows the
# webhook's refusal and its warnings.
source "$(dirname "$0")/lib.sh"

if ! command -v openssl >/dev/null 2>&1; then
  echo "admission.sh: openssl is missing (apt-get install openssl)" >&2
  exit 2
fi
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=webhook-ca" \
  -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=deny.webhooks.svc" \
  -keyout "$work/tls.key" -out "$work/tls.csr" 2>/dev/null
printf 'subjectAltName=DNS:deny.webhooks.svc\n' >"$work/ext"
openssl x509 -req -days 1 -in "$work/tls.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" \
  -CAcreateserial -extfile "$work/ext" -out "$work/tls.crt" 2>/dev/null

python3 "$root/scripts/admission_webhook.py" "$work/tls.crt" "$work/tls.key" >"$work/port" &
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done
port=$(cat "$work/port")

start_server --webhook-service "webhooks/deny:443=127.0.0.1:$port"

cat >"$work/webhook.yaml" <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: configmap-guard
webhooks:
  - name: deny.example.com
    sideEffects: None
    admissionReviewVersions: ["v1"]
    clientConfig:
      service: {namespace: webhooks, name: deny, path: /validate}
      caBundle: $(base64 -w0 "$work/ca.crt")
    rules:
      - apiGroups: [""]
        apiVersions: ["v1"]
        operations: ["CREATE"]
        resources: ["configmaps"]
YAML

expect "register the webhook" 0 \
'validatingwebhookconfiguration.admissionregistration.k8s.io/configmap-guard created' \
-- create -f "$work/webhook.yaml"

expect "the webhook refuses a ConfigMap" 1 \
'error: failed to create configmap: admission webhook "deny.example.com" denied the request: configmap "blocked" is not allowed' \
-- create configmap blocked --from-literal=k=v

expect "and warns about another" 0 \
'Warning: checked by the Python webhook
configmap/fine created' \
-- create configmap fine --from-literal=k=v

stop_server
finish
