import sys

from stumpcheck.cli.commands import main

sys.exit(main())
