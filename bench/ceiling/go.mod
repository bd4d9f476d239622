module qkcm.local/bench/ceiling

go 1.24
