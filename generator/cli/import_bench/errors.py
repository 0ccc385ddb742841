"""The one error of the import: input that cannot become a measurement."""


class BenchInputError(Exception):
    """Input that cannot become a measurement: printed as one message, exit 2."""
