"""The bundled sample app: a small expenses site on loopback, used by
``teachd demo`` and the tests. Its server-side state is what tests assert on."""

from teachd.sampleapp.server import SampleApp, Variant

__all__ = ["SampleApp", "Variant"]
