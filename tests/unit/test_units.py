

def test_print_alike_says_whether_two_sizes_print_the_same():
    from generator.units import print_alike
    assert print_alike(438_057_472, 438_057_472 + 1024)  # 417.8 MiB both
    assert not print_alike(438_057_472, 219_028_736)


def test_durations_are_said_in_the_largest_whole_unit() -> None:
    from generator.units import duration

    assert [duration(s) for s in (1, 40, 90, 7200, 86400 * 3, 5e8)] == [
        "1 second", "40 seconds", "2 minutes", "2 hours", "3 days", "16 years"]
