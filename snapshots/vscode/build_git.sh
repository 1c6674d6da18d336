#!/bin/sh
# Builds snapshots/vscode/git: the .git folder of a repository over snapshots/vscode/project, which tasks copy
# to {workspace}/.git (a folder named .git cannot be kept in mcpworld's own repository).
#  main:    "Initial cart service", the project with an older src/cart.js (no receipt()), so the project as it is
#           has one uncommitted change
#  release: one commit more, "Release 1.0: tax rate 0.25", which changes src/config.js only
# Fixed names and dates make the same hashes every time.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -a "$here/project/." "$work/"
cd "$work"
export GIT_AUTHOR_NAME="Cart Dev" GIT_AUTHOR_EMAIL="dev@cart.example" GIT_COMMITTER_NAME="Cart Dev" \
  GIT_COMMITTER_EMAIL="dev@cart.example" GIT_AUTHOR_DATE="2025-03-01T10:00:00Z" GIT_COMMITTER_DATE="2025-03-01T10:00:00Z"
git init -q -b main --template=
git config user.name "Cart Dev"
git config user.email "dev@cart.example"
git config commit.gpgsign false
# the older cart.js: receipt() and its export not yet written
python3 - <<'PY'
src = open("src/cart.js").read()
start = src.index("function receipt(cart)")
end = src.index("module.exports")
open("src/cart.js", "w").write(src[:start] + src[end:].replace(", receipt }", " }"))
PY
git add -A
git commit -q -m "Initial cart service"
git branch release
git checkout -q release
sed -i 's/taxRate: 0.2,/taxRate: 0.25,/' src/config.js
GIT_AUTHOR_DATE="2025-03-02T10:00:00Z" GIT_COMMITTER_DATE="2025-03-02T10:00:00Z" git commit -q -am "Release 1.0: tax rate 0.25"
git checkout -q main
git repack -adq && git prune
rm -rf .git/logs .git/info .git/hooks .git/description .git/COMMIT_EDITMSG .git/ORIG_HEAD
rm -rf "$here/git"
cp -a .git "$here/git"
