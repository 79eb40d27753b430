"""`python -m pinky` runs the CLI."""

from pinky.cli.main import main

if __name__ == "__main__":
    main()
