"""§2's roundings of `p / 2^s` on Python integers: the exact values the adapters' tests and
experiments hold each runtime to."""


def r_floor(p, s):
    return p >> s


def r_half_up(p, s):
    return p if s == 0 else (p + (1 << (s - 1))) >> s


def r_half_even(p, s):
    if s == 0:
        return p
    q, r, h = p >> s, p - ((p >> s) << s), 1 << (s - 1)
    return q + 1 if r > h or (r == h and q % 2) else q


R = {"floor": r_floor, "half_up": r_half_up, "half_even": r_half_even}
