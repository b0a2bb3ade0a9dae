/*
 * dealii.cc -- a stand-in for SPEC CPU2006's 447.dealII, written for the
 * spmsim project against the deal.II finite element library as Debian ships
 * it (libdeal.ii-dev 9.4.1).
 *
 * What SPEC's 447.dealII computes
 * -------------------------------
 * SPEC's benchmark description (http://www.spec.org/cpu2006/Docs/447.dealII.html)
 * says the testcase is a program built on deal.II, a C++ library for adaptive
 * finite elements and error estimation, that solves "a Helmholtz-type
 * equation with non-constant coefficients", an equation at the heart of
 * solvers for fluid flow, electromagnetics and elasticity. Build scripts for
 * SPEC's sources (LLVM's test-suite, External/SPEC/CFP2006/447.dealII)
 * compile library and program for three space dimensions
 * (-Ddeal_II_dimension=3); the only argument is the number of adaptive
 * refinement cycles (test 8, train 10, ref 23), and every cycle writes the
 * mesh (grid-N.eps) and the solution (solution-N.gmv). The program is, as
 * far as we know (not stated in the excerpt of SPEC's page we could read),
 * built like deal.II's goal-oriented tutorial of that time (step-14): the
 * mesh is refined by a duality-weighted residual (DWR) estimate of the
 * error in one quantity of interest, with trilinear Q1 elements for the
 * problem and triquadratic Q2 elements for the dual problem.
 *
 * What this program computes
 * --------------------------
 * The same kind of computation, written from scratch on deal.II 9.4:
 *
 *   -div( a(x) grad u ) + c(x) u = f   in  Omega,   u = 0 on the boundary,
 *
 * in 3D on Omega = [-1,1]^3 minus the octant [0,1]^3 (deal.II's hyper_L, a
 * domain with re-entrant edges and a re-entrant corner), with smooth
 * non-constant coefficients a(x) (diffusion, between 0.6 and 1.4) and
 * c(x) (the Helmholtz zero-order term, >= 1), and a source f with a peak.
 *
 * Every refinement cycle:
 *   1. primal solve: trilinear Q1 elements, hanging-node and boundary
 *      constraints, CG with an SSOR preconditioner;
 *   2. dual solve for the quantity of interest J(u) = u(x0), a point value:
 *      a(phi, z) = phi(x0), triquadratic Q2 elements, same solver;
 *   3. DWR error estimate J(u) - J(u_h) ~ rho(u_h)(z - I_h z), localised
 *      with a partition of unity (the Q1 basis functions psi_i): the
 *      indicator of node i is rho(u_h)((z - I_h z) psi_i), the indicators
 *      of a cell's nodes give the cell's indicator;
 *   4. refine the cells with the largest indicators (a fixed fraction,
 *      5% by default), no coarsening.
 * It prints one line per cycle (cells, unknowns, CG iterations, J(u_h),
 * the estimated error) and, with -w, writes solution-N.vtk each cycle.
 *
 * Differences from SPEC's program: the library is deal.II 9.4 (Debian's
 * shared library, with MPI, PETSc, Trilinos and ~200 shared objects to
 * load), not the much older version SPEC froze and compiled in; the
 * coefficients, domain, evaluation point and the localisation of the DWR
 * estimate (partition of unity instead of cell and face residuals) are
 * this program's own; output files are off by default (SPEC writes eps/gmv
 * files every cycle); and the default run (9 cycles from a 56-cell mesh,
 * ending at 1,022 cells, 1,624 primal and 11,235 dual unknowns) is sized
 * for about 3.7 G instructions (0.93 G of them loading the shared
 * libraries), far smaller than SPEC's ref run of 23 cycles.
 *
 * Determinism: one thread. main() calls MultithreadInfo::set_thread_limit(1)
 * before anything else, which keeps deal.II's TBB-based loops (matrix-vector
 * products, WorkStream) on the calling thread; no TBB worker is started.
 * The program leaves with _Exit() (see the end of main()). No timing goes
 * to the output.
 *
 * Usage: dealii [cycles] [-g initial_global_refinements] [-f refine_fraction]
 *               [-w]
 *   cycles      number of solve/estimate/refine cycles (default 9)
 *   -g G        uniform refinements of the 7-cell coarse mesh (default 1)
 *   -f F        fraction of cells refined each cycle (default 0.05)
 *   -w          write solution-N.vtk for every cycle into the current dir
 * cycles = 0 builds the mesh and exits (measures start-up).
 */

#include <deal.II/base/multithread_info.h>
#include <deal.II/base/point.h>
#include <deal.II/base/quadrature_lib.h>
#include <deal.II/base/tensor.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_tools.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/grid_refinement.h>
#include <deal.II/grid/grid_tools.h>
#include <deal.II/grid/tria.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/full_matrix.h>
#include <deal.II/lac/precondition.h>
#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/solver_control.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/sparsity_pattern.h>
#include <deal.II/lac/vector.h>

#include <deal.II/numerics/data_out.h>
#include <deal.II/numerics/vector_tools.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace spm
{
  using namespace dealii;

  constexpr int dim = 3;

  // ------------------------------------------------------------------
  // Problem data: all smooth, all non-constant.

  // Diffusion coefficient a(x), in [0.6, 1.4].
  double
  diffusion(const Point<dim> &p)
  {
    return 1.0 + 0.4 * std::sin(2.0 * p[0] + 1.0) * std::cos(3.0 * p[1]) *
                   std::cos(1.5 * p[2]);
  }

  // Zero-order (Helmholtz) coefficient c(x) >= 1.
  double
  reaction(const Point<dim> &p)
  {
    return 1.0 + 2.0 * p.square();
  }

  // Source: a constant load plus a Gaussian peak in the lower octant.
  double
  source(const Point<dim> &p)
  {
    const Point<dim> centre(-0.5, -0.4, -0.6);
    return 1.0 + 20.0 * std::exp(-25.0 * (p - centre).norm_square());
  }

  // Where the quantity of interest u(x0) is evaluated: inside the domain,
  // not on any dyadic mesh plane.
  const Point<dim> evaluation_point(0.3141, -0.2718, 0.1618);

  // ------------------------------------------------------------------
  // One finite element space on the shared mesh, with its linear system.

  struct Space
  {
    Space(Triangulation<dim> &tria, const unsigned int degree)
      : fe(degree)
      , dofs(tria)
    {}

    FE_Q<dim>                 fe;
    DoFHandler<dim>           dofs;
    AffineConstraints<double> hanging;     // hanging nodes only
    AffineConstraints<double> constraints; // hanging nodes + u = 0 on boundary
    SparsityPattern           pattern;
    SparseMatrix<double>      matrix;
    Vector<double>            rhs;
    Vector<double>            solution;
    unsigned int              cg_iterations = 0;

    void
    setup()
    {
      dofs.distribute_dofs(fe);

      hanging.clear();
      DoFTools::make_hanging_node_constraints(dofs, hanging);
      hanging.close();

      constraints.clear();
      constraints.merge(hanging);
      VectorTools::interpolate_boundary_values(dofs,
                                               0,
                                               Functions::ZeroFunction<dim>(),
                                               constraints);
      constraints.close();

      DynamicSparsityPattern dsp(dofs.n_dofs());
      DoFTools::make_sparsity_pattern(dofs, dsp, constraints, false);
      pattern.copy_from(dsp);
      matrix.reinit(pattern);
      rhs.reinit(dofs.n_dofs());
      solution.reinit(dofs.n_dofs());
    }

    // Assemble a(.,.) (symmetric, so the same matrix serves the primal
    // and the dual problem); the source term is added only if with_source.
    void
    assemble(const Mapping<dim> &mapping, const bool with_source)
    {
      const QGauss<dim>  quadrature(fe.degree + 1);
      FEValues<dim>      fev(mapping,
                        fe,
                        quadrature,
                        update_values | update_gradients |
                          update_quadrature_points | update_JxW_values);
      const unsigned int n = fe.n_dofs_per_cell();
      FullMatrix<double> local_matrix(n, n);
      Vector<double>     local_rhs(n);
      std::vector<types::global_dof_index> indices(n);

      for (const auto &cell : dofs.active_cell_iterators())
        {
          fev.reinit(cell);
          local_matrix = 0;
          local_rhs    = 0;
          for (const unsigned int q : fev.quadrature_point_indices())
            {
              const Point<dim> &x  = fev.quadrature_point(q);
              const double      dx = fev.JxW(q);
              const double      ak = diffusion(x) * dx;
              const double      ck = reaction(x) * dx;
              const double      fk = with_source ? source(x) * dx : 0.0;
              for (unsigned int i = 0; i < n; ++i)
                {
                  const double          vi = fev.shape_value(i, q);
                  const Tensor<1, dim> &gi = fev.shape_grad(i, q);
                  for (unsigned int j = 0; j <= i; ++j)
                    local_matrix(i, j) += ak * (gi * fev.shape_grad(j, q)) +
                                          ck * vi * fev.shape_value(j, q);
                  local_rhs(i) += fk * vi;
                }
            }
          for (unsigned int i = 0; i < n; ++i)
            for (unsigned int j = i + 1; j < n; ++j)
              local_matrix(i, j) = local_matrix(j, i);

          cell->get_dof_indices(indices);
          constraints.distribute_local_to_global(
            local_matrix, local_rhs, indices, matrix, rhs);
        }
    }

    // Add the point functional phi -> phi(p) to the right-hand side.
    void
    add_point_source(const Mapping<dim> &mapping, const Point<dim> &p)
    {
      const auto found =
        GridTools::find_active_cell_around_point(mapping, dofs, p);
      const unsigned int n = fe.n_dofs_per_cell();
      Vector<double>     local(n);
      for (unsigned int i = 0; i < n; ++i)
        local(i) = fe.shape_value(i, found.second);
      std::vector<types::global_dof_index> indices(n);
      found.first->get_dof_indices(indices);
      constraints.distribute_local_to_global(local, indices, rhs);
    }

    void
    solve()
    {
      SolverControl control(20000, 1e-12 * rhs.l2_norm());
      SolverCG<Vector<double>> cg(control);
      PreconditionSSOR<SparseMatrix<double>> ssor;
      ssor.initialize(matrix, 1.2);
      cg.solve(matrix, solution, rhs, ssor);
      constraints.distribute(solution);
      cg_iterations = control.last_step();
    }

    // u(p) from the finite element solution.
    double
    value_at(const Mapping<dim> &mapping, const Point<dim> &p) const
    {
      const auto found =
        GridTools::find_active_cell_around_point(mapping, dofs, p);
      const unsigned int                   n = fe.n_dofs_per_cell();
      std::vector<types::global_dof_index> indices(n);
      found.first->get_dof_indices(indices);
      double v = 0;
      for (unsigned int i = 0; i < n; ++i)
        v += solution(indices[i]) * fe.shape_value(i, found.second);
      return v;
    }
  };

  // ------------------------------------------------------------------
  // Duality-weighted residual estimate, localised by a partition of unity.
  //
  // With w = z - I_h z (z the Q2 dual solution, I_h the Q1 interpolant),
  // node i's indicator is
  //   eta_i = F(w psi_i) - a(u_h, w psi_i)
  //         = sum_K int_K f w psi_i - a grad u_h . grad(w psi_i)
  //                       - c u_h w psi_i,
  // psi_i the Q1 basis function of node i. The psi_i sum to one, so the
  // eta_i sum to the global estimate rho(u_h)(w) of J(u) - J(u_h).
  // Contributions of hanging nodes go to the nodes they hang on (the
  // constrained basis functions are not in the conforming space).
  // A cell's indicator is the mean of |eta_i| over its vertices.
  double
  estimate(const Mapping<dim> &mapping,
           Space &             primal,
           Space &             dual,
           Vector<float> &     cell_indicators)
  {
    Vector<double> w(dual.dofs.n_dofs());
    FETools::interpolation_difference(
      dual.dofs, dual.hanging, dual.solution, primal.dofs, primal.hanging, w);

    const QGauss<dim> quadrature(dual.fe.degree + 1);
    FEValues<dim>     fev_p(mapping,
                        primal.fe,
                        quadrature,
                        update_values | update_gradients |
                          update_quadrature_points | update_JxW_values);
    FEValues<dim>     fev_d(mapping,
                        dual.fe,
                        quadrature,
                        update_values | update_gradients);

    const unsigned int          n_q = quadrature.size();
    const unsigned int          n_p = primal.fe.n_dofs_per_cell();
    std::vector<double>         uh(n_q), wv(n_q);
    std::vector<Tensor<1, dim>> guh(n_q), gw(n_q);
    Vector<double>              local(n_p);
    std::vector<types::global_dof_index> indices(n_p);

    Vector<double> eta(primal.dofs.n_dofs());

    auto pc = primal.dofs.begin_active();
    auto dc = dual.dofs.begin_active();
    for (; pc != primal.dofs.end(); ++pc, ++dc)
      {
        fev_p.reinit(pc);
        fev_d.reinit(dc);
        fev_p.get_function_values(primal.solution, uh);
        fev_p.get_function_gradients(primal.solution, guh);
        fev_d.get_function_values(w, wv);
        fev_d.get_function_gradients(w, gw);

        local = 0;
        for (unsigned int q = 0; q < n_q; ++q)
          {
            const Point<dim> &x  = fev_p.quadrature_point(q);
            const double      dx = fev_p.JxW(q);
            const double      f  = source(x);
            const double      a  = diffusion(x);
            const double      c  = reaction(x);
            for (unsigned int i = 0; i < n_p; ++i)
              {
                const double          psi  = fev_p.shape_value(i, q);
                const Tensor<1, dim> &gpsi = fev_p.shape_grad(i, q);
                const Tensor<1, dim>  g_wpsi = psi * gw[q] + wv[q] * gpsi;
                local(i) += (f * wv[q] * psi - a * (guh[q] * g_wpsi) -
                             c * uh[q] * wv[q] * psi) *
                            dx;
              }
          }
        pc->get_dof_indices(indices);
        primal.hanging.distribute_local_to_global(local, indices, eta);
      }

    double total = 0;
    for (unsigned int i = 0; i < eta.size(); ++i)
      total += eta(i);

    cell_indicators.reinit(primal.dofs.get_triangulation().n_active_cells());
    unsigned int k = 0;
    for (const auto &cell : primal.dofs.active_cell_iterators())
      {
        cell->get_dof_indices(indices);
        double s = 0;
        for (unsigned int i = 0; i < n_p; ++i)
          s += std::fabs(eta(indices[i]));
        cell_indicators(k++) = static_cast<float>(s / n_p);
      }
    return total;
  }

  void
  write_vtk(const Space &primal, const unsigned int cycle)
  {
    DataOut<dim> out;
    out.attach_dof_handler(primal.dofs);
    out.add_data_vector(primal.solution, "u");
    out.build_patches();
    std::ofstream file("solution-" + std::to_string(cycle) + ".vtk");
    out.write_vtk(file);
  }

  int
  run(const unsigned int cycles,
      const unsigned int global_refinements,
      const double       refine_fraction,
      const bool         write_files)
  {
    Triangulation<dim> tria;
    GridGenerator::hyper_L(tria, -1.0, 1.0);
    tria.refine_global(global_refinements);
    std::printf("447.dealII stand-in: 3D, Q1 primal / Q2 dual, DWR point "
                "value at (%.4f, %.4f, %.4f)\n",
                evaluation_point[0],
                evaluation_point[1],
                evaluation_point[2]);
    std::printf("coarse mesh: %u cells; %u cycles, refine fraction %.3f\n",
                tria.n_active_cells(),
                cycles,
                refine_fraction);
    if (cycles == 0)
      return 0;

    const MappingQ<dim> mapping(1);
    Space               primal(tria, 1);
    Space               dual(tria, 2);

    std::printf("%5s %9s %9s %9s %5s %5s %16s %13s\n",
                "cycle",
                "cells",
                "dofs",
                "dual_dofs",
                "cg_p",
                "cg_d",
                "J(u_h)",
                "est_error");
    for (unsigned int cycle = 0; cycle < cycles; ++cycle)
      {
        primal.setup();
        primal.assemble(mapping, true);
        primal.solve();

        dual.setup();
        dual.assemble(mapping, false);
        dual.add_point_source(mapping, evaluation_point);
        dual.solve();

        Vector<float> indicators;
        const double  est = estimate(mapping, primal, dual, indicators);
        const double  J   = primal.value_at(mapping, evaluation_point);

        std::printf("%5u %9u %9u %9u %5u %5u %16.10e %13.5e\n",
                    cycle,
                    tria.n_active_cells(),
                    static_cast<unsigned int>(primal.dofs.n_dofs()),
                    static_cast<unsigned int>(dual.dofs.n_dofs()),
                    primal.cg_iterations,
                    dual.cg_iterations,
                    J,
                    est);
        if (write_files)
          write_vtk(primal, cycle);

        if (cycle + 1 < cycles)
          {
            GridRefinement::refine_and_coarsen_fixed_number(tria,
                                                            indicators,
                                                            refine_fraction,
                                                            0.0);
            tria.execute_coarsening_and_refinement();
          }
      }
    std::printf("done\n");
    return 0;
  }
} // namespace spm

static void
usage(const char *prog)
{
  std::fprintf(stderr,
               "usage: %s [cycles] [-g global_refinements] "
               "[-f refine_fraction] [-w]\n",
               prog);
  std::exit(2);
}

int
main(int argc, char **argv)
{
  // Before anything runs in deal.II: one thread, so the run is
  // deterministic (TBB workers would otherwise be started).
  dealii::MultithreadInfo::set_thread_limit(1);

  unsigned int cycles             = 9;
  unsigned int global_refinements = 1;
  double       refine_fraction    = 0.05;
  bool         write_files        = false;
  bool         have_cycles        = false;

  for (int i = 1; i < argc; ++i)
    {
      const char *a = argv[i];
      if (std::strcmp(a, "-g") == 0 && i + 1 < argc)
        global_refinements = std::atoi(argv[++i]);
      else if (std::strcmp(a, "-f") == 0 && i + 1 < argc)
        refine_fraction = std::atof(argv[++i]);
      else if (std::strcmp(a, "-w") == 0)
        write_files = true;
      else if (a[0] >= '0' && a[0] <= '9' && !have_cycles)
        {
          cycles      = std::atoi(a);
          have_cycles = true;
        }
      else
        usage(argv[0]);
    }
  if (!(refine_fraction > 0.0 && refine_fraction <= 1.0) ||
      global_refinements > 6)
    usage(argv[0]);

  const int status =
    spm::run(cycles, global_refinements, refine_fraction, write_files);

  // Leave without running the libraries' static destructors: destroying
  // deal.II's TBB thread-limit object makes TBB start a worker thread at
  // exit, whose few thousand instructions vary from run to run. Every
  // object of the computation has been destroyed when run() returned.
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(status);
}
