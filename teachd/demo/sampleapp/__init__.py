"""The bundled sample app: a small, deliberately unfriendly expenses site on
loopback, used by ``teachd demo``, the drift suite and the tests. Its
server-side state (what was saved, what was clicked) is what tests judge."""

from teachd.demo.sampleapp.pages import Variant
from teachd.demo.sampleapp.posts import PostsVariant
from teachd.demo.sampleapp.server import SampleApp

__all__ = ["PostsVariant", "SampleApp", "Variant"]
