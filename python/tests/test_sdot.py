"""The Python packages against an independent reference (half-plane clipping in NumPy) and
their errors. Run by ctest (python_pytest) with the build tree's packages on PYTHONPATH."""
import loom
import numpy as np
import pytest
import sdot

UNIT_SQUARE = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]


def clip(polygon, a, c):
    """The part of `polygon` (a list of points) where a·x ≤ c."""
    out = []
    for k, p in enumerate(polygon):
        q = polygon[(k + 1) % len(polygon)]
        fp, fq = np.dot(a, p) - c, np.dot(a, q) - c
        if fp <= 0:
            out.append(p)
        if (fp < 0 < fq) or (fq < 0 < fp):
            t = fp / (fp - fq)
            out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
    return out


def area_and_centroid(polygon):
    if len(polygon) < 3:
        return 0.0, None
    x = np.array([p[0] for p in polygon])
    y = np.array([p[1] for p in polygon])
    cross = x * np.roll(y, -1) - np.roll(x, -1) * y
    area = cross.sum() / 2
    if area == 0:
        return 0.0, None
    cx = ((x + np.roll(x, -1)) * cross).sum() / (6 * area)
    cy = ((y + np.roll(y, -1)) * cross).sum() / (6 * area)
    return area, (cx, cy)


def brute_force(positions, weights):
    """Each cell: the unit square clipped by the bisectors of every other seed (the seed of lower
    index keeps a cell shared by two identical seeds, as sdot does)."""
    measures, centroids = [], []
    for i, (xi, wi) in enumerate(zip(positions, weights)):
        cell = list(UNIT_SQUARE)
        for j, (xj, wj) in enumerate(zip(positions, weights)):
            if j == i:
                continue
            a = 2 * (xj - xi)
            c = xj @ xj - xi @ xi - wj + wi
            if not a.any():
                if c < 0 or (c == 0 and j < i):
                    cell = []
                continue
            cell = clip(cell, a, c)
        area, centroid = area_and_centroid(cell)
        measures.append(area)
        centroids.append(centroid if centroid is not None else tuple(xi))
    return np.array(measures), np.array(centroids)


def cloud(n, seed, weight_scale):
    rng = np.random.default_rng(seed)
    return rng.random((n, 2)), rng.random(n) * weight_scale


@pytest.mark.parametrize("nb_boxes", [1, 2, 3, 8])
@pytest.mark.parametrize("weight_scale", [0.0, 1e-3, 0.05])
def test_measures_and_centroids_against_brute_force(nb_boxes, weight_scale):
    positions, weights = cloud(40, 1, weight_scale)
    pd = sdot.PowerDiagram(positions, weights, boundaries=sdot.box_half_spaces([0, 0], [1, 1]),
                           nb_boxes=nb_boxes)
    measures, centroids = brute_force(positions, weights)
    assert isinstance(pd.measures, np.ndarray) and pd.measures.dtype == np.float64
    np.testing.assert_allclose(pd.measures, measures, rtol=0, atol=1e-13)
    full = measures > 1e-12
    np.testing.assert_allclose(pd.centroids[full], centroids[full], rtol=0, atol=1e-10)


def test_cells_far_from_their_seeds_and_empty_cells():
    positions, _ = cloud(30, 2, 0)
    weights = 0.5 * positions[:, 0]  # cells pushed towards larger x; some emptied
    pd = sdot.PowerDiagram(positions, weights, boundaries=sdot.box_half_spaces([0, 0], [1, 1]))
    measures, _ = brute_force(positions, weights)
    np.testing.assert_allclose(pd.measures, measures, rtol=0, atol=1e-13)
    assert (measures == 0).any()
    assert pd.measures.sum() == pytest.approx(1.0, abs=1e-13)


def test_cell_polygons_hold_the_measures():
    positions, weights = cloud(200, 3, 1e-3)
    pd = sdot.PowerDiagram(positions, weights, boundaries=sdot.box_half_spaces([0, 0], [1, 1]))
    polygons = pd.cell_polygons
    assert len(polygons) == 200
    areas = np.array([area_and_centroid([tuple(v) for v in cell])[0] for cell in polygons])
    np.testing.assert_allclose(areas, pd.measures, rtol=0, atol=1e-14)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_few_seeds(n):
    positions, weights = cloud(n, 4, 1e-2)
    pd = sdot.PowerDiagram(positions.reshape(n, 2), weights,
                           boundaries=sdot.box_half_spaces([0, 0], [1, 1]))
    measures, _ = brute_force(positions.reshape(n, 2), weights)
    np.testing.assert_allclose(pd.measures, measures, rtol=0, atol=1e-14)


def test_other_domains_as_rows():
    positions, weights = cloud(50, 5, 1e-3)
    triangle = np.array([[-1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [1.0, 1.0, 1.0]])  # x, y ≥ 0, x + y ≤ 1
    pd = sdot.PowerDiagram(positions, weights, boundaries=triangle)
    assert pd.measures.sum() == pytest.approx(0.5, abs=1e-14)


def test_inputs_of_other_dtypes_are_converted_once():
    positions, weights = cloud(100, 6, 0)
    reference = sdot.PowerDiagram(positions, weights, sdot.box_half_spaces([0, 0], [1, 1])).measures
    as_float32 = sdot.PowerDiagram(positions.astype(np.float32), weights.astype(np.float32),
                                   sdot.box_half_spaces([0, 0], [1, 1])).measures
    np.testing.assert_allclose(as_float32, reference, atol=1e-5)
    grid = np.array([[i, j] for i in range(4) for j in range(4)], dtype=np.int64)
    on_grid = sdot.PowerDiagram(grid, np.zeros(16, dtype=np.int32),
                                sdot.box_half_spaces([-0.5, -0.5], [3.5, 3.5])).measures
    np.testing.assert_array_equal(on_grid, np.ones(16))
    from_lists = sdot.PowerDiagram(positions.tolist(), weights.tolist(),
                                   sdot.box_half_spaces([0, 0], [1, 1])).measures
    np.testing.assert_array_equal(from_lists, reference)


def test_same_bits_every_time():
    positions, weights = cloud(3000, 7, 1e-3)
    boundaries = sdot.box_half_spaces([0, 0], [1, 1])
    for nb_boxes in (1, 3):
        first = sdot.PowerDiagram(positions, weights, boundaries, nb_boxes=nb_boxes).measures
        again = sdot.PowerDiagram(positions, weights, boundaries, nb_boxes=nb_boxes).measures
        np.testing.assert_array_equal(first, again)


def test_same_bits_at_any_number_of_boxes():
    positions, weights = cloud(3000, 9, 1e-3)
    boundaries = sdot.box_half_spaces([0, 0], [1, 1])
    one = sdot.PowerDiagram(positions, weights, boundaries, same_bits=True)
    for nb_boxes in (2, 3, 8):
        other = sdot.PowerDiagram(positions, weights, boundaries, nb_boxes=nb_boxes,
                                  same_bits=True)
        np.testing.assert_array_equal(other.measures, one.measures)
        np.testing.assert_array_equal(other.centroids, one.centroids)
    plain = sdot.PowerDiagram(positions, weights, boundaries).measures
    np.testing.assert_allclose(one.measures, plain, rtol=0, atol=1e-14)


def test_bad_input_names_the_problem():
    positions, weights = cloud(20, 8, 0)
    square = sdot.box_half_spaces([0, 0], [1, 1])
    with pytest.raises(ValueError, match="shape"):
        sdot.PowerDiagram(np.zeros((20, 3)), weights, square)
    with pytest.raises(TypeError, match="numeric"):
        sdot.PowerDiagram(np.array([["a", "b"]] * 20), weights, square)
    bad = weights.copy()
    bad[7] = np.nan
    with pytest.raises(ValueError, match="7"):
        sdot.PowerDiagram(positions, bad, square)
    far = positions.copy()
    far[3, 1] = np.inf
    with pytest.raises(ValueError, match="3"):
        sdot.PowerDiagram(far, weights, square)
    with pytest.raises(ValueError):
        sdot.PowerDiagram(positions, weights[:10], square)
    with pytest.raises(ValueError):
        sdot.PowerDiagram(positions, weights, [sdot.HalfSpace([1, 0], 1)])  # unbounded
    with pytest.raises(ValueError):
        sdot.PowerDiagram(positions, weights, square, nb_boxes=0)


def test_spread_over_boxes_of_one_process():
    positions, weights = cloud(2000, 9, 1e-3)
    square = sdot.box_half_spaces([0, 0], [1, 1])
    whole = sdot.PowerDiagram(positions, weights, square).measures
    ranks = loom.BoxRanks(3)
    pd = sdot.PowerDiagram(loom.spread_host(positions, ranks), loom.spread_host(weights, ranks),
                           square)
    m = pd.measures
    assert isinstance(m, loom.Spread)
    np.testing.assert_allclose(m.value, whole, rtol=0, atol=1e-15)
    np.testing.assert_allclose(loom.gather_to_host(m), whole, rtol=0, atol=1e-15)
    assert m.sum() == pytest.approx(1.0, abs=1e-13)
    assert m.max() == pytest.approx(whole.max(), abs=1e-15)
    assert m.min() == pytest.approx(whole.min(), abs=1e-15)
    assert m.mean() == pytest.approx(1 / 2000, abs=1e-15)


def test_optimal_transport_reaches_the_target_masses():
    positions, _ = cloud(500, 10, 0)
    positions = 0.2 + 0.3 * positions  # seeds in a corner of the square: cells far from them
    masses = np.full(500, 1 / 500)
    ot = sdot.OptimalTransport(positions, masses, sdot.box_half_spaces([0, 0], [1, 1]))
    result = ot.solve()
    np.testing.assert_allclose(result["measures"], masses, rtol=0, atol=1e-9)
    again = sdot.PowerDiagram(positions, result["weights"], sdot.box_half_spaces([0, 0], [1, 1]))
    np.testing.assert_allclose(again.measures, masses, rtol=0, atol=1e-9)
    assert result["newton_iterations"] >= 1
    with pytest.raises(ValueError, match="target"):
        sdot.OptimalTransport(positions, masses * 2, sdot.box_half_spaces([0, 0], [1, 1]))


@pytest.mark.parametrize("nb_boxes", [1, 3])
@pytest.mark.parametrize("warm_start", [False, True])
def test_new_weights_give_what_a_new_diagram_gives(nb_boxes, warm_start):
    positions, weights = cloud(60, 12, 0)
    square = sdot.box_half_spaces([0, 0], [1, 1])
    pd = sdot.PowerDiagram(positions, weights, square, nb_boxes=nb_boxes, warm_start=warm_start)
    np.testing.assert_allclose(pd.measures, brute_force(positions, weights)[0], rtol=0, atol=1e-13)
    for scale in (1e-3, 0.05, 0.3):  # up to cells far from their seeds, some empty
        weights = scale * positions[:, 0] + 0.1 * scale * np.sin(7 * positions[:, 1])
        pd.set_weights(weights)
        measures, centroids = brute_force(positions, weights)
        np.testing.assert_allclose(pd.measures, measures, rtol=0, atol=1e-13)
        full = measures > 1e-12
        np.testing.assert_allclose(pd.centroids[full], centroids[full], rtol=0, atol=1e-10)
        if not warm_start:  # the same computation as a new diagram's: the same bits
            new = sdot.PowerDiagram(positions, weights, square, nb_boxes=nb_boxes)
            np.testing.assert_array_equal(pd.measures, new.measures)
    assert (measures == 0).any()
    with pytest.raises(ValueError, match="17"):
        bad = weights.copy()
        bad[17] = np.inf
        pd.set_weights(bad)
    with pytest.raises(ValueError):
        pd.set_weights(weights[:10])
    np.testing.assert_allclose(pd.measures, measures, rtol=0, atol=1e-13)  # nothing changed


@pytest.mark.parametrize("coarse_to_fine", ["automatic", "always", "never"])
def test_coarse_to_fine_gives_what_the_search_gives(coarse_to_fine):
    positions, _ = cloud(200, 13, 0)
    square = sdot.box_half_spaces([0, 0], [1, 1])
    # weights that move the cells away from their seeds, some empty
    weights = 0.3 * positions[:, 0] + 0.03 * np.sin(7 * positions[:, 1])
    pd = sdot.PowerDiagram(positions, weights, square, coarse_to_fine=coarse_to_fine)
    np.testing.assert_allclose(pd.measures, brute_force(positions, weights)[0], rtol=0, atol=1e-13)
    with pytest.raises(ValueError, match="'sometimes'"):
        sdot.PowerDiagram(positions, weights, square, coarse_to_fine="sometimes")


@pytest.mark.parametrize("warm_start", [False, True])
def test_new_positions_give_what_a_new_diagram_gives(warm_start):
    positions, _ = cloud(80, 13, 0)
    square = sdot.box_half_spaces([0, 0], [1, 1])
    weights = 0.2 * positions[:, 0]  # cells pushed away from their seeds
    pd = sdot.PowerDiagram(positions, weights, square, warm_start=warm_start)
    pd.measures
    rng = np.random.default_rng(14)
    for step in (0.01, 0.1):
        positions = np.clip(positions + step * (rng.random(positions.shape) - 0.5), 0, 1)
        weights = 0.2 * positions[:, 0]
        pd.set_positions(positions, weights)
        measures, centroids = brute_force(positions, weights)
        np.testing.assert_allclose(pd.measures, measures, rtol=0, atol=1e-13)
        full = measures > 1e-12
        np.testing.assert_allclose(pd.centroids[full], centroids[full], rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="80"):
        pd.set_positions(positions[:40], weights[:40])
    with pytest.raises(ValueError, match="shape"):
        pd.set_positions(np.zeros((80, 3)), weights)
    np.testing.assert_allclose(pd.measures, measures, rtol=0, atol=1e-13)  # nothing changed


def test_spread_diagrams_take_new_weights_not_new_positions():
    positions, weights = cloud(500, 15, 0)
    square = sdot.box_half_spaces([0, 0], [1, 1])
    ranks = loom.BoxRanks(3)
    pd = sdot.PowerDiagram(loom.spread_host(positions, ranks), loom.spread_host(weights, ranks),
                           square)
    weights = 0.05 * positions[:, 1]
    pd.set_weights(loom.spread_host(weights, ranks))
    np.testing.assert_allclose(loom.gather_to_host(pd.measures),
                               sdot.PowerDiagram(positions, weights, square).measures, rtol=0,
                               atol=1e-15)
    with pytest.raises(TypeError, match="spread"):
        pd.set_weights(weights)
    with pytest.raises(TypeError, match="new PowerDiagram"):
        pd.set_positions(loom.spread_host(positions, ranks), loom.spread_host(weights, ranks))
    whole = sdot.PowerDiagram(positions, weights, square)
    with pytest.raises(TypeError, match="whole"):
        whole.set_weights(loom.spread_host(weights, ranks))


def test_optimal_transport_after_the_seeds_moved():
    positions, _ = cloud(400, 16, 0)
    positions = 0.2 + 0.3 * positions
    masses = np.full(400, 1 / 400)
    square = sdot.box_half_spaces([0, 0], [1, 1])
    ot = sdot.OptimalTransport(positions, masses, square)
    weights = ot.solve()["weights"]
    for k in range(2):  # two time steps, each solved from the last weights
        positions = positions + 0.002 * np.sin(9 * positions[:, ::-1] + k)
        ot.set_positions(positions)
        result = ot.solve(weights)
        np.testing.assert_allclose(result["measures"], masses, rtol=0, atol=1e-9)
        np.testing.assert_allclose(brute_force(positions, result["weights"])[0], masses, rtol=0,
                                   atol=1e-9)
        weights = result["weights"]
    with pytest.raises(ValueError, match="400"):
        ot.set_positions(positions[:100])
    ranks = loom.BoxRanks(2)
    spread = sdot.OptimalTransport(loom.spread_host(positions, ranks),
                                   loom.spread_host(masses, ranks), square)
    with pytest.raises(TypeError, match="new OptimalTransport"):
        spread.set_positions(positions)


def test_tensors_in_give_tensors_out():
    torch = pytest.importorskip("torch")
    positions, weights = cloud(300, 11, 1e-3)
    square = sdot.box_half_spaces([0, 0], [1, 1])
    reference = sdot.PowerDiagram(positions, weights, square, nb_boxes=3)
    pd = sdot.PowerDiagram(torch.as_tensor(positions), torch.as_tensor(weights), square,
                           nb_boxes=3)
    for name in ("measures", "centroids"):
        value = getattr(pd, name)
        assert isinstance(value, torch.Tensor) and value.dtype == torch.float64
        np.testing.assert_array_equal(value.numpy(), getattr(reference, name))
    assert all(isinstance(cell, torch.Tensor) for cell in pd.cell_polygons)
    ranks = loom.BoxRanks(2)
    spread = sdot.PowerDiagram(loom.spread_host(torch.as_tensor(positions), ranks),
                               loom.spread_host(torch.as_tensor(weights), ranks), square).measures
    assert isinstance(spread.value, torch.Tensor)
    assert isinstance(loom.gather_to_host(spread), torch.Tensor)
    result = sdot.OptimalTransport(torch.as_tensor(positions), torch.full((300,), 1 / 300, dtype=torch.float64),
                                   square).solve()
    assert isinstance(result["weights"], torch.Tensor)
    np.testing.assert_allclose(result["measures"].numpy(), 1 / 300, rtol=0, atol=1e-9)
    # NumPy in, NumPy out, with torch imported.
    assert isinstance(sdot.PowerDiagram(positions, weights, square).measures, np.ndarray)


def test_torch_ranks_need_an_initialised_process_group():
    pytest.importorskip("torch")
    with pytest.raises(ValueError, match="init_process_group"):
        loom.TorchRanks()


@pytest.mark.parametrize("nb_boxes", [1, 3])
def test_same_bits_as_the_cpp_library(nb_boxes, tmp_path):
    """The measures equal, bit for bit, those of a C++ program given the same doubles."""
    import os
    import subprocess

    reference = os.environ.get("SDOT_CPP_REFERENCE")
    if not reference:
        pytest.skip("SDOT_CPP_REFERENCE (set by ctest) names the C++ reference program")
    positions, weights = cloud(5000, 11, 1e-3)
    source, result = tmp_path / "input.bin", tmp_path / "measures.bin"
    with open(source, "wb") as f:
        np.array([len(weights)], dtype=np.int64).tofile(f)
        positions.astype(np.float64).tofile(f)
        weights.astype(np.float64).tofile(f)
    subprocess.run([reference, str(source), str(result), str(nb_boxes)], check=True)
    cpp = np.fromfile(result, dtype=np.float64)
    python = sdot.PowerDiagram(positions, weights, sdot.box_half_spaces([0, 0], [1, 1]),
                               nb_boxes=nb_boxes).measures
    assert cpp.shape == python.shape
    assert cpp.tobytes() == python.tobytes()


def test_loom_program_reruns_with_a_larger_capacity():
    ranks = loom.BoxRanks(3)
    slots = loom.Capacity(1)
    calls = []

    def program(ranks, values, offset):
        calls.append(slots.value)
        dest = np.zeros(len(values.value), dtype=np.int64)  # every row to rank 0
        got = loom.exchange(ranks, loom.route(ranks, dest, values, slots))
        assert got.data.shape == (3, 3, slots.value, 1) and got.counts.shape == (3, 3)
        return got.data[0][got.data[0] >= 0].sum() + offset

    run = loom.spmd(program, ranks)
    assert run(loom.spread_host(np.arange(12.0), ranks), 100) == 66 + 100
    assert calls == [1, 4] and slots.value == 4 and run.last_reruns == 1
    assert run(loom.spread_host(np.arange(12.0), ranks), 0) == 66 and run.last_reruns == 0


def test_loom_errors_in_a_program():
    ranks = loom.BoxRanks(2)
    values = loom.spread_host(np.arange(4.0), ranks)

    def bad_destination(ranks, values):
        return loom.route(ranks, np.full(len(values.value), 7), values, loom.Capacity(2))

    with pytest.raises(loom.CollectiveError, match="route"):  # a ValueError on every process
        loom.spmd(bad_destination, ranks)(values)
    with pytest.raises(ValueError, match="dest"):
        loom.route(ranks, np.zeros((2, 2)), values, loom.Capacity(2))

    def fails(ranks, values):
        raise KeyError("the program's own error")

    with pytest.raises(KeyError, match="own error"):  # one process: it propagates as it is
        loom.spmd(fails, ranks)(values)
