#!/usr/bin/env bash
# Installs the system packages the project needs when they are missing (Debian/Ubuntu):
# python3 with venv, and Node.js with npm for Neo4j's Cypher 5 front-end used by the checks.
set -euo pipefail

missing=()
command -v python3 >/dev/null 2>&1 || missing+=(python3)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
command -v make >/dev/null 2>&1 || missing+=(make)
# `docker-compose config` validates docker-compose.yml offline in the tests (no engine needed).
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing system packages: ${missing[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: missing ${missing[*]} and no apt-get to install them; install them by hand" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
