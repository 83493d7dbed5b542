#!/bin/bash
# tracked-files.sh fails, naming each file, when git tracks an executable
# binary (an ELF, Mach-O, PE or archive of objects, whatever its mode) or a
# file over 1 MiB outside the allow-list below; when such a binary lies in
# the work tree untracked but not ignored (the next git add -A would take
# it); and when .gitignore misses the binary that go build leaves of a main
# package, at the root or in the package's folder. Build outputs and bench
# scratch belong in .gitignore, not in every clone. Run from the
# repository's root (make lint runs it).
set -euo pipefail
limit=$((1 << 20))
# Data the tests need, allowed past the size limit (never binaries).
allowed=(
	parmetis/serial/testdata/4elt.graph
)
bad=0

# binary_kind prints what kind of binary file $1 is, or nothing.
binary_kind() {
	case "$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')" in
	7f454c46) echo "an ELF executable or object" ;;
	cffaedfe | cefaedfe | feedfacf | feedface | cafebabe) echo "a Mach-O binary" ;;
	4d5a*) echo "a PE (Windows) executable" ;;
	213c6172) echo "an archive of objects (ar)" ;;
	esac
}

while IFS= read -r -d '' f; do
	[ -f "$f" ] || continue # deleted in the work tree, not yet in the index
	kind=$(binary_kind "$f")
	if [ -n "$kind" ]; then
		echo "lint: $f is $kind: remove it from git (git rm --cached) and ignore it"
		bad=1
		continue
	fi
	size=$(stat -c %s "$f")
	if [ "$size" -gt "$limit" ]; then
		ok=0
		for a in "${allowed[@]}"; do [ "$f" = "$a" ] && ok=1; done
		if [ "$ok" = 0 ]; then
			echo "lint: $f is $size bytes, over 1 MiB and not in ci/tracked-files.sh's allow-list: keep large data out of git, or allow it there if the tests need it"
			bad=1
		fi
	fi
done < <(git ls-files -z)

while IFS= read -r -d '' f; do
	[ -f "$f" ] || continue
	kind=$(binary_kind "$f")
	if [ -n "$kind" ]; then
		echo "lint: $f is $kind, untracked and not ignored: delete it, or add it to .gitignore"
		bad=1
	fi
done < <(git ls-files -z --others --exclude-standard)

if command -v go >/dev/null; then
	for dir in $(go list -f '{{if eq .Name "main"}}{{.Dir}}{{end}}' ./...); do
		dir=${dir#"$PWD/"}
		name=$(basename "$dir")
		outs=("$dir/$name")
		# A folder of that name at the root makes go build refuse to
		# write there, and ignoring the name would hide the folder.
		[ -d "$name" ] || outs+=("$name")
		for out in "${outs[@]}"; do
			if ! git check-ignore -q --no-index "$out"; then
				echo "lint: .gitignore misses $out, the binary go build leaves of ./$dir"
				bad=1
			fi
		done
	done
fi
exit $bad
