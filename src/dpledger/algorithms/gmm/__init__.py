"""Private centres of mixtures of spherical Gaussians: ``gmm.centres`` (Algorithm D.5),
``gmm.neighbourhood`` and ``gmm.projected`` (any dimension)."""

from . import estimators, projected
from .calibration import Calibration, Tuning, calibrate, useful_n
from .model import centre_error, sample_mixture

__all__ = ["Calibration", "Tuning", "calibrate", "centre_error", "estimators", "projected", "sample_mixture", "useful_n"]
