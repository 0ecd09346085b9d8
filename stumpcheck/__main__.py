import sys

from stumpcheck.cli import main

sys.exit(main())
