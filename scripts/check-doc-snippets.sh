#!/usr/bin/env bash
# Keeps the documentation's code honest: every ```swift block of the DocC articles (and of
# docs/ARCHITECTURE.md, the Architecture article) must appear
# verbatim (up to a common indentation) in a Swift file under Tests/WCSApi2Tests/DocSnippets/,
# where it is compiled and run by the DocSnippet* tests. The tutorial's code files
# (DocC/WCSApi2.docc/Resources/*.swift) are checked against the compiled tutorial program
# (Tests/WCSApi2Tests/DocSnippets/Tutorial/): every line of every step must be found there, and the
# last step of each file must be that file. Prints what is not found; exit 1 then.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" - "$@" <<'PY'
import glob, re, sys

catalog = "DocC/WCSApi2.docc"
snippet_dir = "Tests/WCSApi2Tests/DocSnippets"

def indent_variants(text):
    """The file as written and with 2, 4, 6... leading spaces removed from every line that has
    them, so code inside a type or a string literal matches an article's unindented block."""
    lines = text.split("\n")
    variants = []
    for width in range(0, 13, 2):
        prefix = " " * width
        variants.append("\n".join(l[width:] if l.startswith(prefix) else l for l in lines))
    return variants

snippet_files = sorted(glob.glob(f"{snippet_dir}/**/*.swift", recursive=True))
if not snippet_files:
    sys.exit(f"check-doc-snippets: no snippet files under {snippet_dir}")
haystacks = []
for path in snippet_files:
    with open(path, encoding="utf-8") as f:
        haystacks.extend(indent_variants(f.read()))

failures = 0
blocks = 0
fence = re.compile(r"^```swift[^\n]*\n(.*?)^```", re.S | re.M)
for path in sorted(glob.glob(f"{catalog}/**/*.md", recursive=True)) + ["docs/ARCHITECTURE.md"]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for match in fence.finditer(text):
        block = match.group(1).rstrip("\n")
        blocks += 1
        if not any(block in h for h in haystacks):
            failures += 1
            line = text.count("\n", 0, match.start()) + 1
            print(f"{path}:{line}: swift block not found verbatim in {snippet_dir}:")
            print("\n".join("    " + l for l in block.split("\n")[:6]))

def without_plain_comments(text):
    """Drops `//` comment lines (not `///` doc comments) and the blank line after a dropped run."""
    out, dropped = [], False
    for line in text.split("\n"):
        if line.startswith("//") and not line.startswith("///"):
            dropped = True
            continue
        if dropped and line == "" and (not out or out[-1] == ""):
            continue
        dropped = False
        out.append(line)
    return "\n".join(out).strip("\n")

tutorial_lines, tutorial_files, tutorial_haystacks = set(), [], []
for path in glob.glob(f"{snippet_dir}/Tutorial/*.swift"):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    tutorial_lines.update(l.strip() for l in text.split("\n"))
    tutorial_files.append(without_plain_comments(text))
    tutorial_haystacks.extend(indent_variants(text))

# Steps show a file growing: `name-01.swift`, `name-02.swift`... Every line of every step must be
# compiled code; the last step of each file must be a compiled file (or, for `main.swift` and the
# manifest, whose code sits in a function or a string there, appear verbatim after its imports).
code_files = sorted(glob.glob(f"{catalog}/Resources/*.swift"))
finals = {}
for path in code_files:
    key = re.sub(r"-\d+\.swift$", "", path)
    finals[key] = max(finals.get(key, path), path)
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.strip()
            if line and line not in tutorial_lines:
                failures += 1
                print(f"{path}:{number}: line not in {snippet_dir}/Tutorial: {line}")
for path in sorted(finals.values()):
    with open(path, encoding="utf-8") as f:
        text = f.read().strip("\n")
    if text in tutorial_files:
        continue
    body = "\n".join(l for l in text.split("\n") if not l.startswith("import ")).strip("\n")
    if not any(text in h or body in h for h in tutorial_haystacks):
        failures += 1
        print(f"{path}: last step is not the compiled code of {snippet_dir}/Tutorial")

if failures:
    sys.exit(f"check-doc-snippets: {failures} snippet(s) out of date")
print(f"check-doc-snippets: {blocks} article blocks and {len(code_files)} tutorial files match")
PY
