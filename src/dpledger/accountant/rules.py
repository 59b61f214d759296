"""Moved to ``dpledger.privacy.rules`` (privacy events and rules live below the mechanisms that emit
them); this documented path keeps working."""

from ..privacy.rules import *  # noqa: F401,F403
