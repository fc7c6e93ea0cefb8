"""A full offline run (``chronorag demo``) opens no socket outside the loopback range."""

import json
import os
import subprocess
import sys

GUARD = r"""
import json, sys
bad = []
def hook(event, args):
    if event == "socket.connect":
        addr = args[1]
        if isinstance(addr, tuple) and not (str(addr[0]).startswith("127.") or addr[0] in ("::1", "localhost")):
            bad.append(f"connect {addr}")
    elif event == "socket.getaddrinfo":
        host = args[0]
        if host not in (None, "localhost", "127.0.0.1", "::1") and not str(host).startswith("127."):
            bad.append(f"getaddrinfo {host}")
sys.addaudithook(hook)
from chronorag.cli import main
rc = main(["-q", "demo", "--out", sys.argv[1]])
print("GUARD" + json.dumps({"rc": rc, "bad": bad}))
"""


def test_demo_opens_no_external_socket(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env["CHRONORAG_HOME"] = str(tmp_path / "home")
    proc = subprocess.run([sys.executable, "-c", GUARD, str(tmp_path / "demo")], env=env,
                          capture_output=True, text=True, timeout=600)
    line = [l for l in proc.stdout.splitlines() if l.startswith("GUARD")]
    assert line, proc.stdout[-2000:] + proc.stderr[-2000:]
    res = json.loads(line[-1][5:])
    assert res["rc"] == 0
    assert res["bad"] == []
