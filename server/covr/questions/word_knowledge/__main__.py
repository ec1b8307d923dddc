"""``python -m covr.questions.word_knowledge``: rewrite the word-knowledge files
(:func:`covr.questions.word_knowledge.build.main`)."""

from covr.questions.word_knowledge.build import main

raise SystemExit(main())
