# WebSearch flow sizes, Wang (NJUPT) Table I (bytes, cumulative percent).
# Sizes between points are drawn by linear interpolation (app/rnic/rnic_cdf.h).
10 4
100 7
1000 10
10000 15
100000 60
1000000 75
10000000 100
