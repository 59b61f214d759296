"""Moved to ``dpledger.privacy.events`` (privacy events and rules live below the mechanisms that emit
them); this documented path keeps working."""

from ..privacy.events import *  # noqa: F401,F403
