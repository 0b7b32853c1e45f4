"""The daemon: the store's only writer, serving the wire protocol on a unix socket."""
