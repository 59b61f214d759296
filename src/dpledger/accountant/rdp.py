"""Moved to ``dpledger.privacy.rdp`` (privacy events and rules live below the mechanisms that emit
them); this documented path keeps working."""

from ..privacy.rdp import *  # noqa: F401,F403
