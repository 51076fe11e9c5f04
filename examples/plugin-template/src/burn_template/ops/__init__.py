"""The ops of the template backend, one mixin per op family (the stems of `burn.backend.ops`)."""
