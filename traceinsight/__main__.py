import sys

from traceinsight.cli import main

sys.exit(main())
