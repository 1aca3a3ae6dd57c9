module operator-gen.local/flect-pluralize

go 1.22

require github.com/gobuffalo/flect v1.0.3
