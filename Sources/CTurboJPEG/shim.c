// Headers only: SwiftPM needs one source file per C target.
