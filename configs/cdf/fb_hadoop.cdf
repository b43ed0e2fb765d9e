# FB_Hadoop flow sizes, Wang (NJUPT) Table I (bytes, cumulative percent).
10 1
100 2
1000 60
10000 71
100000 88
1000000 97
10000000 100
