#!/usr/bin/env bash
# Open the pull request that adds (or bumps) the plugin in krew's index, from a published
# release's manifest (docs/release.md, step 7):
#
#     scripts/krew-index-pr.sh VERSION [OWNER/REPO]   # default: this clone's GitHub repository
#
# Needs the GitHub CLI, logged in (`gh auth login`): it downloads the release's rke2-payload.yaml,
# checks it installs with krew when krew is there, forks kubernetes-sigs/krew-index (or reuses
# the fork), commits the manifest as plugins/rke2-payload.yaml on a branch and opens the pull
# request.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 VERSION [OWNER/REPO]" >&2; exit 2; }
version="${1#v}"
repo="${2:-$(gh repo view --json nameWithOwner -q .nameWithOwner)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gh release download "v$version" -R "$repo" -p rke2-payload.yaml -D "$work"
if kubectl krew version >/dev/null 2>&1; then
  echo "--- kubectl krew install --manifest (the platform of this machine)"
  KREW_ROOT="$work/krew" kubectl krew install --manifest="$work/rke2-payload.yaml"
  KREW_ROOT="$work/krew" "$work/krew/bin/kubectl-rke2_payload" --version
fi
cd "$work"
gh repo fork kubernetes-sigs/krew-index --clone --default-branch-only -- --depth 1 -q
cd krew-index
branch="rke2-payload-v$version"
git switch -c "$branch"
cp ../rke2-payload.yaml plugins/rke2-payload.yaml
git add plugins/rke2-payload.yaml
if git diff --cached --quiet HEAD -- plugins/rke2-payload.yaml; then
  echo "plugins/rke2-payload.yaml is already this manifest" >&2
  exit 1
fi
git commit -q -m "rke2-payload v$version"
git push -q -u origin "$branch"
gh pr create -R kubernetes-sigs/krew-index --head "$(gh api user -q .login):$branch" \
  --title "rke2-payload v$version" \
  --body "rke2-payload: decode, size and lint the bootstrap Secrets of Cluster API's RKE2 provider. Release: https://github.com/$repo/releases/tag/v$version"
