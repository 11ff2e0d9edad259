#!/usr/bin/env bash
# The test suite on every supported Python found on this machine (pyproject's
# requires-python is >=3.11), each in its own virtualenv .venv-X.Y (git-ignored),
# made and installed here with `pip install -e ".[test]"`, so a fresh clone on a
# fresh machine needs nothing else. A version that is missing is skipped, and
# the summary says so. Exit status: 1 if any version's suite failed.
#
#   .ci/test_pythons.sh [X.Y ...]        (default: 3.11 3.12 3.13)
#   PYTHONS_DONE="3.11" .ci/test_pythons.sh   counts 3.11 as passed by `make test`
set -uo pipefail
cd "$(dirname "$0")/.."

versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(3.11 3.12 3.13)
done_by_make=" ${PYTHONS_DONE:-} "

version_of() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null; }

# The interpreter of version $1: pyenv's (`pyenv prefix`), else pythonX.Y on
# PATH, checked to run and to be that version (a pyenv shim of a version that
# is not selected fails to run, and is not counted).
find_python() {
    local v=$1 cand prefix
    if command -v pyenv >/dev/null 2>&1 && prefix=$(pyenv prefix "$v" 2>/dev/null); then
        cand="$prefix/bin/python$v"
        [ "$(version_of "$cand")" = "$v" ] && { echo "$cand"; return 0; }
    fi
    cand=$(command -v "python$v" 2>/dev/null) || return 1
    [ "$(version_of "$cand")" = "$v" ] && { echo "$cand"; return 0; }
    return 1
}

# .venv-X.Y with wengert and its test tools; installed again when pyproject.toml
# changes (as the Makefile does for .venv)
make_venv() {
    local py=$1 venv=$2
    if [ ! -x "$venv/bin/python" ]; then
        "$py" -m venv "$venv" || return 1
    fi
    if [ ! -f "$venv/.installed" ] || [ pyproject.toml -nt "$venv/.installed" ]; then
        "$venv/bin/python" -m pip install -q -e ".[test]" || return 1
        touch "$venv/.installed"
    fi
}

passed=() failed=() skipped=()
for v in "${versions[@]}"; do
    if [[ "$done_by_make" == *" $v "* ]]; then
        echo "== Python $v: tested by make test (.venv)"
        passed+=("$v")
        continue
    fi
    if ! py=$(find_python "$v"); then
        echo "== Python $v: not found (neither pyenv nor python$v on PATH): skipped"
        skipped+=("$v")
        continue
    fi
    echo "== Python $v: $py, in .venv-$v"
    start=$SECONDS
    if ! make_venv "$py" ".venv-$v"; then
        echo "== Python $v: could not make .venv-$v or install wengert's test tools"
        failed+=("$v")
    elif ".venv-$v/bin/python" -m pytest -q -n 2 tests; then
        passed+=("$v")
    else
        failed+=("$v")
    fi
    echo "== Python $v: $((SECONDS - start)) s"
done

echo
echo "Pythons passed: ${passed[*]:-none}"
[ ${#failed[@]} -eq 0 ] || echo "Pythons FAILED: ${failed[*]}"
[ ${#skipped[@]} -eq 0 ] || echo "Pythons skipped (not on this machine): ${skipped[*]}"
[ ${#failed[@]} -eq 0 ]
