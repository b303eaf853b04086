"""What the media parity drivers (run_vision_parity.py, run_image_parity.py, run_audio_parity.py,
run_audio_logits_parity.py) share: the PASS/FAIL report and running a tool for its stdout."""

import os
import subprocess


class Report:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, text):
        print(("PASS " if ok else "FAIL ") + text, flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1


def run(args):
    """Runs `args`; its stdout, or RuntimeError naming the tool, its exit code and its stderr."""
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{os.path.basename(args[0])} {' '.join(args[1:5])} ... exited "
                           f"{r.returncode}: {r.stderr.strip()}")
    return r.stdout
