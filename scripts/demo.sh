#!/usr/bin/env bash
# Set up .venv on a fresh machine and run the main job on the bundled sample, offline.
source "$(dirname "$0")/_setup.sh"
chronorag demo "$@"
