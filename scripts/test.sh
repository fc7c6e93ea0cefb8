#!/usr/bin/env bash
# Set up .venv with every extra the tests use, then run the whole test suite offline.
export CHRONORAG_EXTRAS="cpu,fast,nlp,eval,studio,graph,graphdb,records,dev,local-llm"
source "$(dirname "$0")/_setup.sh"
python -m pytest "$@"
