"""huichat: a terminal chat client whose memory never forgets a turn."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("huichat")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+source"
