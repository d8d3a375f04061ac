#!/bin/sh
# Install every Debian package mdgpu needs (scripts/debian-packages.txt).
# Idempotent; skips apt when everything is already installed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
pkgs=$(grep -v '^[[:space:]]*#' "$here/debian-packages.txt" | tr -s ' \n' ' ')
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
