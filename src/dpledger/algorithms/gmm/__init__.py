"""Private centres of mixtures of spherical Gaussians (Algorithm D.5): ``gmm.centres``."""

from . import estimators
from .calibration import Calibration, Tuning, calibrate, useful_n
from .model import centre_error, sample_mixture

__all__ = ["Calibration", "Tuning", "calibrate", "centre_error", "estimators", "sample_mixture", "useful_n"]
