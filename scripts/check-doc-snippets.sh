#!/usr/bin/env bash
# Keeps the documentation's code honest: every ```swift block of the DocC articles must appear
# verbatim (up to a common indentation) in a Swift file under Tests/WCSApi2Tests/DocSnippets/,
# where it is compiled and run by the DocSnippet* tests; every non-blank line of the tutorial's
# code files (DocC/WCSApi2.docc/Resources/*.swift) must appear in the compiled tutorial program
# (Tests/WCSApi2Tests/DocSnippets/Tutorial/). Prints each block that is not found; exit 1 then.
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
for path in sorted(glob.glob(f"{catalog}/**/*.md", recursive=True)):
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

tutorial_lines = set()
for path in glob.glob(f"{snippet_dir}/Tutorial/*.swift"):
    with open(path, encoding="utf-8") as f:
        tutorial_lines.update(l.strip() for l in f)
code_files = sorted(glob.glob(f"{catalog}/Resources/*.swift"))
for path in code_files:
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.strip()
            if line and line not in tutorial_lines:
                failures += 1
                print(f"{path}:{number}: line not in {snippet_dir}/Tutorial: {line}")

if failures:
    sys.exit(f"check-doc-snippets: {failures} snippet(s) out of date")
print(f"check-doc-snippets: {blocks} article blocks and {len(code_files)} tutorial files match")
PY
