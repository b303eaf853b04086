#!/usr/bin/python3
"""Step 1: assemble the training corpus from the Python standard library sources on this machine.

  corpus.py [--source /usr/lib/python3.11] --out DIR [--max-mb N] [--smoke]

Source: the pure-Python modules of CPython's standard library as Debian installs them under
/usr/lib/python3.11 (package libpython3.11-stdlib), under the PSF License Agreement (its text is
/usr/lib/python3.11/LICENSE.txt), which allows copying, modifying and distributing derived works.
Left out: test suites (test/, tests/, idle_test/), the generated codec tables of encodings/,
site-/dist-packages (other licenses) and anything that is not valid UTF-8.

The file list is sorted by relative path, so it depends only on the installed files. A file goes
to the held-out split when sha1(relative path) % 32 == 0 (about 3 %), independent of the other
files. Writes DIR/train.jsonl and DIR/heldout.jsonl (one {"path", "text"} object per line, in
list order) and DIR/manifest.json (every file with its split, size and sha256).
"""

import argparse
import hashlib
import json
import os
import sys

EXCLUDED_DIRS = {"test", "tests", "idle_test", "site-packages", "dist-packages", "encodings",
                 "__pycache__"}
HELDOUT_MODULUS = 32
MAX_FILE_BYTES = 400_000  # larger files are data tables, not code or prose
SMOKE_MB = 0.4


def list_sources(root):
    """Relative paths of the corpus files under root, sorted. -> [str]."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in EXCLUDED_DIRS)
        for name in filenames:
            if name.endswith(".py"):
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(found)


def is_heldout(rel_path):
    digest = hashlib.sha1(rel_path.encode("utf-8")).hexdigest()
    return int(digest, 16) % HELDOUT_MODULUS == 0


def read_text(path):
    """The file's text with \\r\\n as \\n, or None when it is too large or not UTF-8."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) > MAX_FILE_BYTES:
        return None, data
    try:
        return data.decode("utf-8").replace("\r\n", "\n"), data
    except UnicodeDecodeError:
        return None, data


def build(source, out_dir, max_bytes=None):
    """Writes the corpus to out_dir. max_bytes caps the training split (the held-out split is
    capped at max_bytes / 16). -> manifest dict."""
    if not os.path.isdir(source):
        raise SystemExit(f"corpus.py: error: source directory '{source}' does not exist")
    os.makedirs(out_dir, exist_ok=True)
    files, sizes = [], {"train": 0, "heldout": 0}
    caps = None if max_bytes is None else {"train": max_bytes, "heldout": max_bytes // 16}
    with open(os.path.join(out_dir, "train.jsonl"), "w", encoding="utf-8") as train, \
            open(os.path.join(out_dir, "heldout.jsonl"), "w", encoding="utf-8") as heldout:
        for rel in list_sources(source):
            text, data = read_text(os.path.join(source, rel))
            entry = {"path": rel, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            split = "heldout" if is_heldout(rel) else "train"
            if text is None or not text.strip():
                entry["split"] = "skipped"
            elif caps is not None and sizes[split] + len(data) > caps[split]:
                entry["split"] = "skipped"
            else:
                entry["split"] = split
                sizes[split] += len(data)
                out = heldout if split == "heldout" else train
                out.write(json.dumps({"path": rel, "text": text}, ensure_ascii=False) + "\n")
            files.append(entry)
    manifest = {
        "source": os.path.abspath(source),
        "license": "PSF License Agreement (Python Software Foundation License Version 2), "
                   "see LICENSE.txt in the source directory",
        "heldout_rule": f"sha1(relative path) % {HELDOUT_MODULUS} == 0",
        "train_bytes": sizes["train"],
        "heldout_bytes": sizes["heldout"],
        "files": files,
    }
    with open(os.path.join(out_dir, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def read_split(corpus_dir, split):
    """The documents of one split ('train' or 'heldout') in corpus order. -> [str]."""
    with open(os.path.join(corpus_dir, f"{split}.jsonl"), encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f if line.strip()]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--source", default="/usr/lib/python3.11")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--max-mb", type=float, default=None, help="cap the training split (MB)")
    p.add_argument("--smoke", action="store_true", help=f"a {SMOKE_MB} MB corpus for tests")
    args = p.parse_args(argv)
    mb = SMOKE_MB if args.smoke else args.max_mb
    m = build(args.source, args.out, None if mb is None else int(mb * 1e6))
    n = {s: sum(1 for f in m["files"] if f["split"] == s) for s in ("train", "heldout", "skipped")}
    print(f"corpus: {n['train']} train files ({m['train_bytes'] / 1e6:.2f} MB), "
          f"{n['heldout']} held-out ({m['heldout_bytes'] / 1e6:.2f} MB), {n['skipped']} skipped "
          f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
