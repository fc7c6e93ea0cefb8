"""``chronorag sft``: TempTool SFT records in the tagged protocol."""

from __future__ import annotations

import argparse
import json

from chronorag.errors import ConfigError


def _cmd_sft(args: argparse.Namespace) -> int:
    from chronorag.graphs.output import check_output_path
    from chronorag.workflows.temptool.prompts import TAGGED_SYSTEM
    from chronorag.workflows.temptool.sft import (
        cronquestions_records,
        reasoner_records,
        write_jsonl,
    )

    check_output_path(args.out, inputs=[args.path, args.index])  # before any work
    if args.source == "cronquestions":
        records = cronquestions_records(args.path, system_prompt=TAGGED_SYSTEM)
    else:
        from chronorag.evaluation import load_questions
        from chronorag.graphs.event_index import EventIndex
        from chronorag.workflows.temptool.reasoner import TemporalReasoner
        from chronorag.workflows.temptool.tools import TemporalKGTools

        if not args.index:
            raise ConfigError("--index INDEX_DIR is needed to run the reasoner")
        reasoner = TemporalReasoner(TemporalKGTools(EventIndex.load(args.index)))
        records = reasoner_records(reasoner, load_questions(args.path, limit=args.limit),
                                   system_prompt=TAGGED_SYSTEM)
    n = write_jsonl(records, args.out)
    print(json.dumps({"source": args.source, "records": n, "out": str(args.out)}))
    return 0
