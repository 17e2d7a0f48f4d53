"""A validating admission webhook in Python, for scripts/admission.sh: refuses ConfigMaps named
`blocked` (403, with a message), warns about the others. Serves HTTPS with the given certificate
on a free loopback port and prints the port."""

import json
import ssl
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        request = review["request"]
        response = {"uid": request["uid"], "allowed": True, "warnings": ["checked by the Python webhook"]}
        if request.get("name") == "blocked":
            response = {"uid": request["uid"], "allowed": False,
                        "status": {"code": 403, "reason": "Forbidden",
                                   "message": 'configmap "blocked" is not allowed'}}
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "response": response}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = HTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1], sys.argv[2])
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
