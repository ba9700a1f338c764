"""Reads a VTKHDF file of cells (sdot-measures --cells, sdot-ot --cells) with VTK's own reader,
vtkHDFReader, for the tests of the programs.

usage: read_vtkhdf_cells.py FILE PIECES

Prints one line per item, a name then its values:
  cells N                  the cells VTK read
  pieces C0 C1 ...         the cells of piece p when FILE is read as PIECES pieces (one
                           partition per piece when the file has PIECES partitions)
  empty K                  the empty cells (VTK_EMPTY_CELL, no point)
  area A0 A1 ...           each cell's area, as VTK's vtkCellSizeFilter computes it
  <name> V0 V1 ...         each array of the cell data (seed_index, measure, ...)
Exits with status 1, and a message on stderr, when a cell is neither a polygon nor an empty
cell without points, or the file has no cell data.
"""
import sys

import vtk
from vtk.util.numpy_support import vtk_to_numpy

VTK_EMPTY_CELL, VTK_POLYGON = 0, 7


def read(path, piece=0, pieces=1):
    reader = vtk.vtkHDFReader()
    reader.SetFileName(path)
    reader.UpdatePiece(piece, pieces, 0)
    return reader.GetOutput()


def main():
    path, pieces = sys.argv[1], int(sys.argv[2])
    grid = read(path)
    n = grid.GetNumberOfCells()
    empty = 0
    for i in range(n):
        kind, points = grid.GetCellType(i), grid.GetCell(i).GetNumberOfPoints()
        if kind == VTK_EMPTY_CELL and points == 0:
            empty += 1
        elif kind != VTK_POLYGON or points < 3:
            sys.exit(f"{path}: cell {i} has type {kind} and {points} points")
    sizes = vtk.vtkCellSizeFilter()
    sizes.SetInputData(grid)
    sizes.Update()
    lines = [f"cells {n}",
             "pieces " + " ".join(str(read(path, p, pieces).GetNumberOfCells())
                                  for p in range(pieces)),
             f"empty {empty}"]
    arrays = {"area": sizes.GetOutput().GetCellData().GetArray("Area")}
    data = grid.GetCellData()
    if data.GetNumberOfArrays() == 0:
        sys.exit(f"{path}: no cell data")
    for k in range(data.GetNumberOfArrays()):
        arrays[data.GetArrayName(k)] = data.GetArray(k)
    for name, array in arrays.items():
        lines.append(" ".join([name] + [repr(float(v)) for v in vtk_to_numpy(array)]))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
