import sys

from generator.cli.main import main

sys.exit(main())
