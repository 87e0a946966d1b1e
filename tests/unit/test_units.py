

def test_print_alike_says_whether_two_sizes_print_the_same():
    from generator.units import print_alike
    assert print_alike(438_057_472, 438_057_472 + 1024)  # 417.8 MiB both
    assert not print_alike(438_057_472, 219_028_736)
