"""`python -m vtcode` runs the same command line as the `vtcode` script."""

from vtcode.cli.entry import main

if __name__ == "__main__":
    main()
