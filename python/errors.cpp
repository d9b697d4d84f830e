#include "python/errors.hpp"

#include <Python.h>

#include "core/errors.hpp"

namespace py = pybind11;

namespace symmesh::python {
namespace {

struct ErrorClasses {
  py::object error, scenario, does_not_fit, unsupported, unavailable, simulation;
};

ErrorClasses& classes() {
  // Leaked on purpose: the classes live as long as the interpreter holds the module.
  static auto* held = new ErrorClasses;
  return *held;
}

py::object new_class(py::module_& m, const char* name, const char* doc, py::tuple bases) {
  const std::string qualified = std::string("symmesh.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (!cls) throw py::error_already_set();
  py::object out = py::reinterpret_steal<py::object>(cls);
  m.attr(name) = out;
  return out;
}

void raise(const py::object& cls, const Error& e) {
  py::object exc = cls(e.what());
  exc.attr("message") = e.message();
  exc.attr("where") = e.where();
  exc.attr("rank") = e.rank() ? py::cast(*e.rank()) : py::none();
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

}  // namespace

void register_errors(py::module_& m) {
  ErrorClasses& c = classes();
  const py::object exception = py::reinterpret_borrow<py::object>(PyExc_Exception);
  const py::object value_error = py::reinterpret_borrow<py::object>(PyExc_ValueError);
  const py::object runtime_error = py::reinterpret_borrow<py::object>(PyExc_RuntimeError);
  c.error = new_class(m, "Error", "Every symmesh error: .message, .where, .rank.",
                      py::make_tuple(exception));
  c.scenario = new_class(m, "ScenarioError",
                         "Bad input: str() is 'where: message', where a file:line:col, an "
                         "argument or a file (symmesh's InvalidArgument; the CLI exits 2).",
                         py::make_tuple(c.error, value_error));
  c.does_not_fit = new_class(m, "DoesNotFitError", "A step needs more than the GPU's memory.",
                             py::make_tuple(c.scenario));
  c.unsupported = new_class(m, "UnsupportedError",
                            "Well-formed input outside what symmesh supports (the CLI exits 2).",
                            py::make_tuple(c.error, value_error));
  c.unavailable = new_class(m, "UnavailableError",
                            "What was asked cannot run here, e.g. a backend that was not built.",
                            py::make_tuple(c.error, runtime_error));
  c.simulation =
      new_class(m, "SimulationError", "A failed run: a timeout, a simulator or backend failure.",
                py::make_tuple(c.error, runtime_error));
  py::register_exception_translator([](std::exception_ptr p) {
    const ErrorClasses& k = classes();
    try {
      if (p) std::rethrow_exception(p);
    } catch (const DoesNotFit& e) {
      raise(k.does_not_fit, e);
    } catch (const InvalidArgument& e) {
      raise(k.scenario, e);
    } catch (const Unsupported& e) {
      raise(k.unsupported, e);
    } catch (const Unavailable& e) {
      raise(k.unavailable, e);
    } catch (const Error& e) {
      raise(k.simulation, e);
    }
  });
}

}  // namespace symmesh::python
