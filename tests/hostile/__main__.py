"""``python -m tests.hostile``: run the hostile corpus and list what fails, by issue item."""

import sys

from .test_corpus import main

sys.exit(main())
