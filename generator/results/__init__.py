"""The results store and the shapes of what it holds."""

from generator.results.store import *  # noqa: F401,F403
