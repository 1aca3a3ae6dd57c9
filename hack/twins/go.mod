module operator-gen.local/twins

go 1.24

require go.yaml.in/yaml/v3 v3.0.4
