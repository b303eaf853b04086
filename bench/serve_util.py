"""What the bench scripts that drive `tandem serve` over HTTP share: a JSON POST, a GET, and the
wait for a started server's /health (a server that exits instead ends the script with its log)."""
import json
import sys
import time
import urllib.request


def _headers(key, extra=None):
    h = dict(extra or {})
    if key:
        h["authorization"] = "Bearer " + key
    return h


def post(port, path, body, key=None, timeout=1200):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers=_headers(key, {"content-type": "application/json"}))
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.load(r)


def get(port, path, key=None, timeout=60):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=_headers(key))
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read().decode()


def wait_ready(port, proc, log, tries=3000):
    for _ in range(tries):
        if proc.poll() is not None:
            sys.exit(f"server on port {port} exited:\n" + open(log).read())
        try:
            get(port, "/health", timeout=5)
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"server on port {port} did not become ready")
